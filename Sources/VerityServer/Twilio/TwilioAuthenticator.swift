import Foundation
import Hummingbird

/// Authenticates Twilio's HTTP Basic credentials and puts the project in the context.
///
/// No second secret store: the password is one of the project's Verity API keys (`vk_…`, Twilio's auth token or
/// API key secret), and the user name must be the SID derived from the project (`AC…`, account SID) or from that
/// key (`SK…`, API key SID). `verity admin twilio` prints them.
///
/// Devices use the user name `token`, as the Twilio Verify SDKs do: with a JWT signed by their factor's key the
/// device's factor and project go in the context; any other password (an access token, for enrollment) is left to
/// the one route that takes it, and every other route answers 20003 without a project.
struct TwilioAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let admin: AdminService
    let push: TwilioPush

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let (username, password) = Self.basicCredentials(request), username == "token" {
            guard password.contains(".") else { return try await next(request, context) }
            let (factor, project) = try await push.authenticateDevice(token: password)
            var context = context
            context.project = project
            context.deviceFactor = factor
            return try await next(request, context)
        }
        guard let (username, password) = Self.basicCredentials(request),
            let (project, keyId) = try await admin.projectAndKeyId(forAPIKey: password),
            username == TwilioSID.account(forProject: project.id) || username == TwilioSID.apiKey(forKey: keyId)
        else {
            throw TwilioError.authenticationFailed
        }
        var context = context
        context.project = project
        return try await next(request, context)
    }

    /// The user name and password of `Authorization: Basic …`.
    static func basicCredentials(_ request: Request) -> (String, String)? {
        guard let header = request.headers[.authorization], header.count <= 4096,
            header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: header.dropFirst(6).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
