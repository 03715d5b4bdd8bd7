import Foundation
import VerityCore

/// A secret API key's public face; the secret itself is never stored.
public struct APIKey: Sendable, Equatable, Codable {
    public var id: String
    public var projectId: String
    public var name: String
    /// The first characters of the secret, so a person can tell keys apart.
    public var prefix: String
    public var createdAt: Date
    public var revokedAt: Date?
}
