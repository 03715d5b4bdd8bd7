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
    public var createdAt: Date
}
