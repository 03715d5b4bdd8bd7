import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// One cached provider credential (a JWT or an OAuth access token) and when to stop using it.
struct ProviderCredential: Sendable {
    /// The bearer value. Never logged.
    var value: String
    /// From this instant on, a new credential is minted before the next request.
    var refreshAfter: Date
}
