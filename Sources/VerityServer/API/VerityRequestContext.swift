import Foundation
import Hummingbird

/// The per-request context: Hummingbird's core storage plus the project an API key authenticated.
public struct VerityRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``ProjectAuthenticator``; routes behind it can rely on it.
    public var project: Project?
    /// Set by ``DeviceAuthenticator`` for device routes: the factor whose key signed the request.
    var deviceFactor: FactorRecord?
    /// The device token's use, when the route spends it in its own write (see ``DeviceAuthenticator``).
    var deviceTokenUse: FactorService.DeviceTokenUse?
    /// On the answer route, the challenge the path names as ``DeviceAuthenticator`` read it with the factor (nil when
    /// the factor's project has none).
    var answeredChallenge: ChallengeRecord?
    /// Set by ``PossessionTokenAuthenticator``: the possession flow the auth token runs.
    var possession: PossessionRecord?
    /// The client's IP address, for per-client rate limits: the peer's, or behind a trusted proxy the address it
    /// forwarded for (``ClientAddressMiddleware``); nil when the transport has none.
    var clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        project = nil
        clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated device's factor, for routes mounted behind the device authenticator.
    func requireDeviceFactor() throws -> FactorRecord {
        guard let deviceFactor else { throw VerityError(.unauthorized, "A device token is required.") }
        return deviceFactor
    }

    /// The authenticated possession flow and its project, for routes behind the possession authenticator.
    func requirePossession() throws -> (PossessionRecord, Project) {
        guard let possession, let project else {
            throw VerityError(.unauthorized, "Send the flow's auth token as `Authorization: Bearer vpt_…`.")
        }
        return (possession, project)
    }

    /// A path parameter, percent-decoded (user ids are the customer's own strings).
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        return raw.removingPercentEncoding ?? raw
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
