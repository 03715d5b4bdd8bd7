import Foundation
import Hummingbird
import VerityCore

extension PublicKeyCredentialCreationOptionsJSON: ResponseEncodable {}
extension PublicKeyCredentialRequestOptionsJSON: ResponseEncodable {}

/// The native passkey API. Apps (`/v1/auth/passkeys`, the public project id, the session token where a user is
/// signed in): registration, sign-in with or without a login id, step-up, and the user's own passkeys. Backends
/// (`/v1/users/{userId}/passkeys`, the API key): a user's passkeys, and a registration started for a user id.
///
/// Options are answered in their standard JSON forms; answers are taken as the standard JSON serialisation of a
/// `PublicKeyCredential`. Every check is ``PasskeyService``'s. The app routes that issue or spend a challenge take
/// from the per-client bucket the other sign-in routes take from.
struct PasskeyController {
    let passkeys: PasskeyService
    let sessions: SessionService
    let users: UserService
    let auth: AuthService

    /// Adds the app routes to `app` (`/v1/auth/passkeys`) and the backend's to `backend` (`/v1`).
    func addRoutes(app: RouterGroup<VerityRequestContext>, backend: RouterGroup<VerityRequestContext>) {
        app.post("registration/options", use: registrationOptions)
        app.post("registration/verify", use: register)
        app.post("authentication/options", use: authenticationOptions)
        app.post("authentication/verify", use: signIn)
        app.post("stepup/options", use: stepUpOptions)
        app.post("stepup/verify", use: stepUp)
        app.get("", use: listOwn)
        app.patch(":passkeyId", use: renameOwn)
        app.delete(":passkeyId", use: deleteOwn)

        backend.get("users/:userId/passkeys", use: list)
        backend.post("users/:userId/passkeys/registration/options", use: backendRegistrationOptions)
        backend.post("users/:userId/passkeys/registration/verify", use: backendRegister)
        backend.patch("users/:userId/passkeys/:passkeyId", use: rename)
        backend.delete("users/:userId/passkeys/:passkeyId", use: delete)
    }

    // MARK: - Apps

    @Sendable func registrationOptions(_ request: Request, context: VerityRequestContext) async throws
        -> PublicKeyCredentialCreationOptionsJSON
    {
        let (auth, project) = try await signedIn(request, context, limited: true)
        return PublicKeyCredentialCreationOptionsJSON(
            try await passkeys.registrationOptions(for: auth.user, in: project))
    }

    @Sendable func register(_ request: Request, context: VerityRequestContext) async throws -> PasskeyJSON {
        let (auth, project) = try await signedIn(request, context, limited: true)
        return try await register(request, context: context, for: auth.user, in: project)
    }

    @Sendable func authenticationOptions(_ request: Request, context: VerityRequestContext) async throws
        -> PublicKeyCredentialRequestOptionsJSON
    {
        let project = try await limitedProject(context)
        let body = try await request.decodeJSON(
            AuthenticationOptionsRequest.self, context: context, empty: AuthenticationOptionsRequest())
        return PublicKeyCredentialRequestOptionsJSON(
            try await passkeys.authenticationOptions(
                loginId: body.loginId, sessionClaims: body.sessionClaims, in: project))
    }

    @Sendable func signIn(_ request: Request, context: VerityRequestContext) async throws -> AuthResponse {
        let project = try await limitedProject(context)
        let credential = try await request.decodeJSON(PublicKeyCredentialJSON.self, context: context)
        return try await passkeys.signIn(try credential.assertionAnswer(), in: project)
    }

    @Sendable func stepUpOptions(_ request: Request, context: VerityRequestContext) async throws
        -> PublicKeyCredentialRequestOptionsJSON
    {
        let (auth, project) = try await signedIn(request, context, limited: true)
        return PublicKeyCredentialRequestOptionsJSON(try await passkeys.stepUpOptions(for: auth, in: project))
    }

    @Sendable func stepUp(_ request: Request, context: VerityRequestContext) async throws -> AuthResponse {
        let (auth, project) = try await signedIn(request, context, limited: true)
        let credential = try await request.decodeJSON(PublicKeyCredentialJSON.self, context: context)
        return try await passkeys.stepUp(try credential.assertionAnswer(), for: auth, in: project)
    }

    @Sendable func listOwn(_ request: Request, context: VerityRequestContext) async throws -> Page<PasskeyJSON> {
        let (auth, project) = try await signedIn(request, context)
        return try await list(userId: auth.user.id, in: project)
    }

    @Sendable func renameOwn(_ request: Request, context: VerityRequestContext) async throws -> PasskeyJSON {
        let (auth, project) = try await signedIn(request, context)
        return try await rename(request, context: context, userId: auth.user.id, in: project)
    }

    @Sendable func deleteOwn(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (auth, project) = try await signedIn(request, context)
        try await passkeys.delete(id: try context.pathParameter("passkeyId"), userId: auth.user.id, in: project)
        return Response(status: .noContent)
    }

    // MARK: - Backends

    @Sendable func list(_ request: Request, context: VerityRequestContext) async throws -> Page<PasskeyJSON> {
        let (user, project) = try await namedUser(context)
        return try await list(userId: user.id, in: project)
    }

    @Sendable func backendRegistrationOptions(_ request: Request, context: VerityRequestContext) async throws
        -> PublicKeyCredentialCreationOptionsJSON
    {
        let (user, project) = try await namedUser(context)
        return PublicKeyCredentialCreationOptionsJSON(try await passkeys.registrationOptions(for: user, in: project))
    }

    @Sendable func backendRegister(_ request: Request, context: VerityRequestContext) async throws -> PasskeyJSON {
        let (user, project) = try await namedUser(context)
        return try await register(request, context: context, for: user, in: project)
    }

    @Sendable func rename(_ request: Request, context: VerityRequestContext) async throws -> PasskeyJSON {
        let (user, project) = try await namedUser(context)
        return try await rename(request, context: context, userId: user.id, in: project)
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (user, project) = try await namedUser(context)
        try await passkeys.delete(id: try context.pathParameter("passkeyId"), userId: user.id, in: project)
        return Response(status: .noContent)
    }

    // MARK: - Shared

    /// The signed-in session and its project; `limited` takes from the client's bucket first.
    private func signedIn(_ request: Request, _ context: VerityRequestContext, limited: Bool = false) async throws
        -> (SessionAuth, Project)
    {
        let project = limited ? try await limitedProject(context) : try context.requireProject()
        return (try await sessions.authenticate(bearer: request.bearerToken, in: project), project)
    }

    /// The project, once the client's bucket had room for one more challenge issued or spent.
    private func limitedProject(_ context: VerityRequestContext) async throws -> Project {
        let project = try context.requireProject()
        try await auth.limitClient(context.clientAddress, in: project)
        return project
    }

    private func namedUser(_ context: VerityRequestContext) async throws -> (User, Project) {
        let project = try context.requireProject()
        return (try await users.user(id: try context.pathParameter("userId"), in: project), project)
    }

    private func register(
        _ request: Request, context: VerityRequestContext, for user: User, in project: Project
    ) async throws -> PasskeyJSON {
        let body = try await request.decodeJSON(PasskeyRegistrationRequest.self, context: context)
        return PasskeyJSON(
            try await passkeys.register(
                try body.credential.registrationAnswer(), friendlyName: body.friendlyName, for: user, in: project))
    }

    private func list(userId: String, in project: Project) async throws -> Page<PasskeyJSON> {
        Page(items: try await passkeys.passkeys(userId: userId, in: project).map(PasskeyJSON.init))
    }

    private func rename(
        _ request: Request, context: VerityRequestContext, userId: String, in project: Project
    ) async throws -> PasskeyJSON {
        let id = try context.pathParameter("passkeyId")
        let body = try await request.decodeJSON(RenamePasskeyRequest.self, context: context)
        try await passkeys.rename(id: id, userId: userId, to: body.friendlyName, in: project)
        guard let renamed = try await passkeys.passkeys(userId: userId, in: project).first(where: { $0.id == id })
        else { throw VerityError(.factorNotFound, "The user has no such passkey.") }
        return PasskeyJSON(renamed)
    }
}

/// `POST …/authentication/options`: the login id of the user signing in, or none for a discoverable credential, and
/// the claims the session is to carry.
private struct AuthenticationOptionsRequest: Decodable {
    var loginId: String?
    var sessionClaims: [String: JSONValue]?
}

/// `PATCH …/passkeys/{passkeyId}`: the passkey's new name.
private struct RenamePasskeyRequest: Decodable {
    var friendlyName: String
}

/// `POST …/registration/verify`: the standard JSON of the new `PublicKeyCredential`, and beside its fields an
/// optional `friendlyName`.
private struct PasskeyRegistrationRequest: Decodable {
    var credential: PublicKeyCredentialJSON
    var friendlyName: String?

    private enum CodingKeys: String, CodingKey {
        case friendlyName
    }

    init(from decoder: any Decoder) throws {
        credential = try PublicKeyCredentialJSON(from: decoder)
        friendlyName = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(
            String.self, forKey: .friendlyName)
    }
}

/// A passkey as the native API shows it: never its key, its counter or its credential id.
struct PasskeyJSON: Codable, Sendable, ResponseEncodable {
    /// `pky_…`.
    var id: String
    var userId: String
    var friendlyName: String
    /// Whether it is a synced, multi-device passkey (BE), and whether it was backed up at its last use (BS).
    var backupEligible: Bool
    var backedUp: Bool
    var transports: [String]
    /// The authenticator model, as a UUID (all zero when the authenticator does not say).
    var aaguid: String
    /// The attestation statement format checked at registration (`none` or `packed`).
    var attestationFormat: String
    var createdAt: Date
    var lastUsedAt: Date?

    init(_ passkey: PasskeyRecord) {
        id = passkey.id
        userId = passkey.userId
        friendlyName = passkey.friendlyName
        backupEligible = passkey.credential.backupEligible
        backedUp = passkey.backedUp
        transports = passkey.transports
        aaguid = Self.uuid(passkey.aaguid)
        attestationFormat = passkey.attestationFormat
        createdAt = passkey.createdAt
        lastUsedAt = passkey.lastUsedAt
    }

    /// 16 bytes in the UUID form `8-4-4-4-12`, lowercase.
    private static func uuid(_ bytes: Data) -> String {
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text += "-" }
            text += String(byte, radix: 16).leftPadded(to: 2)
        }
        return text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
