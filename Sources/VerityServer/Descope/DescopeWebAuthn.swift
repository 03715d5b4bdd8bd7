import Foundation
import Hummingbird
import VerityCore

/// Descope's WebAuthn routes (`/v1/auth/webauthn/…`), as python-sdk and descope-swift call them: each ceremony is a
/// `start`, which answers a `transactionId`, the options as a JSON string wrapped in `{"publicKey": …}` and whether the
/// client is to `create` a credential, and a `finish`, which takes the `transactionId` and the standard JSON
/// `PublicKeyCredential` as a JSON string in `response`. The transaction id is the challenge (base64url), which the
/// answer's client data must name.
///
/// A translator: the relying party, its challenges and checks, and what a sign-up writes are the Domain's
/// (``PasskeyAccounts``, ``PasskeyService``).
extension DescopeFace {
    func addWebAuthnRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("v1/auth/webauthn/signup/start", use: webAuthnSignUpStart)
        group.post("v1/auth/webauthn/signup/finish", use: webAuthnSignUpFinish)
        group.post("v1/auth/webauthn/signin/start", use: webAuthnSignInStart)
        group.post("v1/auth/webauthn/signin/finish", use: webAuthnSignInFinish)
        group.post("v1/auth/webauthn/signup-in/start", use: webAuthnSignUpOrInStart)
        group.post("v1/auth/webauthn/update/start", use: webAuthnUpdateStart)
        group.post("v1/auth/webauthn/update/finish", use: webAuthnUpdateFinish)
    }

    /// `webauthn/signup/start`: the creation options of a new user. python-sdk names the login id in `user`,
    /// descope-swift beside it; `user.name` is what the authenticator shows.
    @Sendable func webAuthnSignUpStart(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON
    {
        let project = try await projects.project(try DescopeBearer(request), request)
        let body = try await request.decodeDescope(WebAuthnStartBody.self, context: context)
        try PasskeyService.requireOrigin(body.origin, in: project)
        let options = try await passkeys.signUpOptions(
            loginId: try body.requiredLoginId(), displayName: body.user?.name, in: project)
        return try Self.webAuthnStart(creation: options)
    }

    /// `webauthn/signup/finish`: creates the user with the passkey and signs them in (a JWTResponse).
    @Sendable func webAuthnSignUpFinish(_ request: Request, context: VerityRequestContext) async throws
        -> DescopeTokens
    {
        let (project, answer) = try await webAuthnRegistration(request, context)
        return jwtResponse(try await passkeys.signUp(answer, dialect: .descope(project), in: project), project: project)
    }

    /// `webauthn/signin/start`: the request options of a sign-in of the login id's user (their passkeys in
    /// `allowCredentials`). With `loginOptions.stepup` or `mfa` and the refresh JWT in the bearer value, a step-up of
    /// that session instead, whose transaction id also names the session (`<challenge>.<session id>`): the finish
    /// carries no refresh JWT, and the Domain takes only an assertion by a passkey of that session's user.
    @Sendable func webAuthnSignInStart(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON
    {
        try await webAuthnStartSigningIn(request, context) { loginId, claims, project in
            try Self.webAuthnStart(
                request: try await passkeys.signInOptions(
                    loginId: loginId, sessionClaims: claims, dialect: .descope(project), in: project))
        }
    }

    /// What the sign-in starts share: the project, the login id and the origin, and a step-up when `loginOptions`
    /// ask for one; otherwise `signIn`'s answer for the login id and the `loginOptions.customClaims` its session is
    /// to carry.
    private func webAuthnStartSigningIn(
        _ request: Request, _ context: VerityRequestContext,
        signIn: (String, [String: JSONValue]?, Project) async throws -> ExactKeysJSON
    ) async throws -> ExactKeysJSON {
        let bearer = try DescopeBearer(request)
        let project = try await projects.project(bearer, request)
        let body = try await request.decodeDescope(WebAuthnStartBody.self, context: context)
        let loginId = try body.requiredLoginId()
        try PasskeyService.requireOrigin(body.origin, in: project)
        if let stepUp = try await webAuthnStepUpStart(body, bearer: bearer, loginId: loginId, in: project) {
            return stepUp
        }
        return try await signIn(loginId, body.loginOptions?.customClaims, project)
    }

    /// The start of a step-up when `loginOptions` ask for one (`stepup` or `mfa`); nil for a sign-in.
    private func webAuthnStepUpStart(
        _ body: WebAuthnStartBody, bearer: DescopeBearer, loginId: String, in project: Project
    ) async throws -> ExactKeysJSON? {
        let options = body.loginOptions ?? DescopeLoginOptions()
        guard options.stepup == true || options.mfa == true else { return nil }
        let signedIn = try await steppingUp(bearer, loginId: loginId, in: project)
        let stepUp = try await passkeys.stepUpOptions(
            for: signedIn, sessionClaims: options.customClaims, dialect: .descope(project), in: project)
        return try Self.webAuthnStart(request: stepUp, session: signedIn.session.id)
    }

    /// `webauthn/signin/finish`: the sign-in's session (a JWTResponse), or the stepped-up session's new session JWT
    /// (with `su`) and one more refresh JWT of it, which descope-swift requires in the answer (the one the client
    /// holds stays valid, as after a step-up by code).
    @Sendable func webAuthnSignInFinish(_ request: Request, context: VerityRequestContext) async throws
        -> DescopeTokens
    {
        let project = try await projects.project(try DescopeBearer(request), request)
        let body = try await request.decodeDescope(WebAuthnFinishBody.self, context: context)
        let answer = try body.credential().assertionAnswer()
        let transaction = try body.requiredTransactionId().split(separator: ".", maxSplits: 1).map(String.init)
        try PasskeyService.requireAnswer(answer.clientDataJSON, to: transaction[0])
        guard transaction.count == 2 else {
            return jwtResponse(
                try await passkeys.passkeys.signIn(answer, dialect: .descope(project), in: project), project: project)
        }
        let session = try await sessions.authenticate(sessionId: transaction[1], in: project)
        return jwtResponse(
            try await passkeys.passkeys.stepUp(
                answer, for: session, issuingRefreshToken: true, dialect: .descope(project), in: project),
            project: project)
    }

    /// `webauthn/signup-in/start`: a sign-in when the login id's user has a passkey (`create: false`, finished by
    /// `signin/finish`), a sign-up when nobody holds it (`create: true`, finished by `signup/finish`).
    @Sendable func webAuthnSignUpOrInStart(_ request: Request, context: VerityRequestContext) async throws
        -> ExactKeysJSON
    {
        try await webAuthnStartSigningIn(request, context) { loginId, claims, project in
            switch try await passkeys.signUpOrInOptions(
                loginId: loginId, sessionClaims: claims, dialect: .descope(project), in: project)
            {
            case .signUp(let options): try Self.webAuthnStart(creation: options)
            case .signIn(let options): try Self.webAuthnStart(request: options)
            }
        }
    }

    /// `webauthn/update/start`: the creation options of one more passkey for the refresh JWT's user, whose login id
    /// the body names.
    @Sendable func webAuthnUpdateStart(_ request: Request, context: VerityRequestContext) async throws
        -> ExactKeysJSON
    {
        let (refreshJwt, project) = try await refreshJwt(request)
        let body = try await request.decodeDescope(WebAuthnStartBody.self, context: context)
        let loginId = try body.requiredLoginId()
        try PasskeyService.requireOrigin(body.origin, in: project)
        let signedIn = try await sessions.authenticate(
            refreshToken: refreshJwt, dialect: .descope(project), in: project)
        try Self.requireOwn(loginId, signedIn)
        return try Self.webAuthnStart(
            creation: try await passkeys.passkeys.registrationOptions(for: signedIn.user, in: project))
    }

    /// `webauthn/update/finish`: keeps the passkey as the user's the challenge was issued to, and answers `{}` (the
    /// session is left as it was: python-sdk then returns None, descope-swift reads nothing).
    @Sendable func webAuthnUpdateFinish(_ request: Request, context: VerityRequestContext) async throws
        -> ExactKeysJSON
    {
        let (project, answer) = try await webAuthnRegistration(request, context)
        _ = try await passkeys.passkeys.register(answer, friendlyName: nil, in: project)
        return ExactKeysJSON([:])
    }

    /// A registration finish's project and answer, which must name the transaction's challenge.
    private func webAuthnRegistration(_ request: Request, _ context: VerityRequestContext) async throws
        -> (Project, PasskeyRegistrationAnswer)
    {
        let project = try await projects.project(try DescopeBearer(request), request)
        let body = try await request.decodeDescope(WebAuthnFinishBody.self, context: context)
        let answer = try body.credential().registrationAnswer()
        try PasskeyService.requireAnswer(answer.clientDataJSON, to: try body.requiredTransactionId())
        return (project, answer)
    }

    /// A start's answer for a registration.
    static func webAuthnStart(creation options: PasskeyCreationOptions) throws -> ExactKeysJSON {
        try webAuthnStart(
            challenge: options.challenge,
            options: PublicKeyOptions(publicKey: PublicKeyCredentialCreationOptionsJSON(options)),
            create: true)
    }

    /// A start's answer for a sign-in, or for a step-up of the session `session`.
    static func webAuthnStart(request options: PasskeyRequestOptions, session: String? = nil) throws -> ExactKeysJSON {
        try webAuthnStart(
            challenge: options.challenge, session: session,
            options: PublicKeyOptions(publicKey: PublicKeyCredentialRequestOptionsJSON(options)),
            create: false)
    }

    private static func webAuthnStart(
        challenge: [UInt8], session: String? = nil, options: some Encodable, create: Bool
    ) throws -> ExactKeysJSON {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ExactKeysJSON([
            "transactionId": .string(
                ([Base64URL.encode(challenge)] + (session.map { [$0] } ?? [])).joined(separator: ".")),
            "options": .string(String(decoding: try encoder.encode(options), as: UTF8.self)), "create": .bool(create),
        ])
    }
}

/// The options as Descope's clients read them: the standard JSON form under `publicKey`, as
/// `navigator.credentials.create` and `get` take them.
private struct PublicKeyOptions<Options: Encodable>: Encodable {
    var publicKey: Options
}

/// A WebAuthn start body: python-sdk's sign-up names the login id in `user`, everything else beside it.
struct WebAuthnStartBody: Decodable {
    struct SignUpUser: Decodable {
        var loginId: String?
        var name: String?
    }

    var loginId: String?
    var user: SignUpUser?
    var origin: String?
    var loginOptions: DescopeLoginOptions?

    func requiredLoginId() throws -> String {
        guard let loginId = loginId ?? user?.loginId, !loginId.isEmpty else {
            throw DescopeError.badRequest("`loginId` is required.")
        }
        return loginId
    }
}

/// A WebAuthn finish body: the transaction and the credential, a JSON string (an object is taken too).
struct WebAuthnFinishBody: Decodable {
    var transactionId: String?
    var response: JSONValue?

    func requiredTransactionId() throws -> String {
        guard let transactionId, !transactionId.isEmpty else {
            throw DescopeError.badRequest("`transactionId` is required.")
        }
        return transactionId
    }

    /// The standard JSON `PublicKeyCredential` that `response` carries.
    func credential() throws -> PublicKeyCredentialJSON {
        let json: Data
        switch response {
        case .string(let text)?: json = Data(text.utf8)
        case .object?: json = try JSONEncoder().encode(response)
        case .null?, .bool?, .integer?, .number?, .array?, nil:
            throw DescopeError.badRequest("`response` is the credential's JSON, as a string.")
        }
        do {
            return try JSONDecoder().decode(PublicKeyCredentialJSON.self, from: json)
        } catch {
            throw DescopeError.badRequest("`response` is not the JSON of a PublicKeyCredential.")
        }
    }
}
