import Foundation
import VerityCore

/// A tenant. Everything else belongs to exactly one project.
public struct Project: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var settings: ProjectSettings
    public var createdAt: Date
    /// Where challenge events are posted, signed with ``webhookSecret``.
    public var webhookURL: String?
    /// The webhook signing secret (`whsec_…`); never part of the JSON form of a project.
    public var webhookSecret: String?

    enum CodingKeys: String, CodingKey {
        case id, name, settings, createdAt, webhookURL
    }

    public init(
        id: String, name: String, settings: ProjectSettings, createdAt: Date, webhookURL: String? = nil,
        webhookSecret: String? = nil
    ) {
        self.id = id
        self.name = name
        self.settings = settings
        self.createdAt = createdAt
        self.webhookURL = webhookURL
        self.webhookSecret = webhookSecret
    }
}
