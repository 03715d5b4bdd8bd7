import Foundation

/// `GET`/`PATCH /v1/project`: the project as its backend sees it.
public struct ProjectSummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// What the project does when a device reports unusual activity.
    public var unusualActivityResponse: UnusualActivityResponse

    public init(id: String, name: String, unusualActivityResponse: UnusualActivityResponse) {
        self.id = id
        self.name = name
        self.unusualActivityResponse = unusualActivityResponse
    }
}
