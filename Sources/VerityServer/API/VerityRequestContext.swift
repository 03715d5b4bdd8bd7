import Foundation
import Hummingbird

/// The per-request context: Hummingbird's core storage plus the project an API key authenticated.
public struct VerityRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``APIKeyAuthenticator``; routes behind it can rely on it.
    public var project: Project?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        project = nil
    }

    /// Bodies are small JSON documents; anything larger is refused with 413.
    public var maxUploadSize: Int { RequestBodyLimit.bytes }

    public var responseEncoder: JSONEncoder { Self.encoder }

    /// The authenticated project, for routes mounted behind the authenticator.
    func requireProject() throws -> Project {
        guard let project else { throw VerityError(.unauthorized, "An API key is required.") }
        return project
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

enum RequestBodyLimit {
    static let bytes = 64 * 1024
}
