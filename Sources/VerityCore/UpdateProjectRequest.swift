import Foundation

/// `PATCH /v1/project` (API key): the project's device-trust settings.
public struct UpdateProjectRequest: Codable, Sendable {
    /// What the project does when a device reports unusual activity.
    public var unusualActivityResponse: UnusualActivityResponse?

    public init(unusualActivityResponse: UnusualActivityResponse? = nil) {
        self.unusualActivityResponse = unusualActivityResponse
    }
}
