import Crypto
import Foundation
import Logging
import VerityCore

/// A signed-in console session, as its store keeps it.
struct ConsoleSessionRecord: Sendable, Equatable {
    var id: String
    var operatorId: String
    var operatorName: String
}
