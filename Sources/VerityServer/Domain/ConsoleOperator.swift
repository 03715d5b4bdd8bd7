import Crypto
import Foundation
import Logging
import VerityCore

/// Someone who may sign in to the console. Operators see and manage every project on this server.
public struct ConsoleOperator: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    /// Whether signing in also asks for a code from an authenticator app.
    public var hasTOTP: Bool
    /// Whether the operator has registered a passkey in the console: then a sign-in link alone does not sign them
    /// in, a passkey (or their TOTP code, when they have TOTP) must.
    public var hasPasskeys: Bool = false
    public var createdAt: Date
}
