import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// The Firebase Auth face: the phone sign-in protocol the Firebase SDKs speak to Google's servers, and to the Auth
/// emulator when an app calls `Auth.auth().useEmulator(withHost:port:)`, served at the root as the emulator serves it
/// (`/identitytoolkit.googleapis.com/v1/accounts:…`, the iOS SDK's `/www.googleapis.com/identitytoolkit/v3/
/// relyingparty/…`, `/securetoken.googleapis.com/v1/token`).
///
/// A translator: the sign-in, its limits, the sessions and the test numbers are the Domain's; the face maps the
/// project's API key to its project, Firebase's names to Verity's, and Verity's refusals to Firebase's messages.
struct FirebaseFace {
    let projects: FirebaseProjects
    let auth: AuthService
    let sessions: SessionService
    let logger: Logger

    func addRoutes(to router: Router<VerityRequestContext>) {
        let errors = FaceErrorMiddleware.firebase(logger: logger)
        let v1 = router.group("identitytoolkit.googleapis.com/v1").add(middleware: errors)
        v1.post("accounts:sendVerificationCode", use: sendVerificationCode)
        v1.post("accounts:signInWithPhoneNumber", use: signInWithPhoneNumber)
        v1.post("accounts:lookup", use: lookup)
        let v3 = router.group("www.googleapis.com/identitytoolkit/v3/relyingparty").add(middleware: errors)
        v3.post("sendVerificationCode", use: sendVerificationCode)
        v3.post("verifyPhoneNumber", use: signInWithPhoneNumber)
        v3.post("getAccountInfo", use: lookup)
        v3.get("getProjectConfig", use: projectConfig)
        router.group("securetoken.googleapis.com/v1").add(middleware: errors).post("token", use: token)
    }

    // MARK: - Phone sign-in

    @Sendable func sendVerificationCode(_ request: Request, context: VerityRequestContext) async throws
        -> ExactKeysJSON
    {
        let (_, project) = try await project(request)
        let body = try await Self.decode(SendVerificationCodeRequest.self, request, context)
        guard let phoneNumber = body.phoneNumber, !phoneNumber.isEmpty else { throw FirebaseError.missingPhoneNumber }
        // The SDKs do not deduplicate: asking again while a code is pending answers it without a second message.
        let started = try await auth.start(
            OTPStartRequest(loginId: phoneNumber, channel: .sms, locale: Self.locale(request), resend: false),
            clientAddress: context.clientAddress, appProof: Self.appProof(request), startedBy: .firebase, in: project)
        return ExactKeysJSON(["sessionInfo": .string(started.verificationId)])
    }

    /// The proof of the app a project that requires one needs (else `MISSING_APP_CREDENTIAL`): Firebase App Check's
    /// `X-Firebase-AppCheck` header, where an app's custom App Check provider puts Verity's proof (an App Attest
    /// assertion or a silent-push proof), or Verity's own `X-Verity-App-Verification`.
    private static func appProof(_ request: Request) -> String? {
        HTTPField.Name("X-Firebase-AppCheck").flatMap { request.headers[$0] } ?? request.appVerificationProof
    }

    @Sendable func signInWithPhoneNumber(_ request: Request, context: VerityRequestContext) async throws
        -> ExactKeysJSON
    {
        let (link, project) = try await project(request)
        let body = try await Self.decode(SignInWithPhoneNumberRequest.self, request, context)
        guard body.idToken == nil, body.temporaryProof == nil else { throw FirebaseError.operationNotAllowed }
        guard let sessionInfo = body.sessionInfo, !sessionInfo.isEmpty else { throw FirebaseError.missingSessionInfo }
        guard let code = body.code, !code.isEmpty else { throw FirebaseError.missingCode }
        guard VerificationService.isVerificationId(sessionInfo) else { throw FirebaseError.invalidSessionInfo }
        let signedIn = try await auth.verify(
            OTPVerifyRequest(verificationId: sessionInfo, code: code), clientAddress: context.clientAddress,
            dialect: .firebase(link), in: project)
        var answer = Self.tokens(signedIn, in: project)
        answer["isNewUser"] = .bool(signedIn.firstSeen)
        answer["phoneNumber"] = Self.phoneNumber(of: signedIn.user).map(JSONValue.string) ?? .null
        return ExactKeysJSON(answer)
    }

    /// `accounts:lookup` / `getAccountInfo`: the signed-in user, which the iOS SDK reads right after sign-in.
    @Sendable func lookup(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (link, project) = try await project(request)
        let body = try await Self.decode(LookupRequest.self, request, context)
        guard let idToken = body.idToken, !idToken.isEmpty else { throw FirebaseError.invalidIdToken }
        let user = try await sessions.authenticate(bearer: idToken, dialect: .firebase(link), in: project).user
        return ExactKeysJSON([
            "kind": .string("identitytoolkit#GetAccountInfoResponse"), "users": .array([Self.account(user)]),
        ])
    }

    @Sendable func projectConfig(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (link, _) = try await project(request)
        return ExactKeysJSON([
            "projectId": .string(link.firebaseProjectId), "authorizedDomains": .array([.string("localhost")]),
        ])
    }

    // MARK: - Tokens

    /// `securetoken` refresh: JSON camelCase from the iOS SDK, form-encoded snake_case from REST clients.
    @Sendable func token(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (link, project) = try await project(request)
        let fields = try await Self.tokenFields(request, context)
        guard fields.grantType == "refresh_token" else {
            throw FirebaseError.badRequest("INVALID_GRANT_TYPE")
        }
        guard let refreshToken = fields.refreshToken, !refreshToken.isEmpty else {
            throw FirebaseError.badRequest("MISSING_REFRESH_TOKEN")
        }
        let refreshed = try await auth.refresh(
            refreshToken, clientAddress: context.clientAddress, dialect: .firebase(link), in: project)
        return ExactKeysJSON([
            "access_token": .string(refreshed.sessionJwt), "id_token": .string(refreshed.sessionJwt),
            "refresh_token": .string(refreshed.refreshToken ?? refreshToken),
            "expires_in": .string("\(project.settings.sessionLifetime)"), "token_type": .string("Bearer"),
            "user_id": .string(refreshed.user.id), "project_id": .string(link.firebaseProjectId),
        ])
    }

    // MARK: - Helpers

    /// The project the request's `?key=` names; an unknown key is refused as Google refuses one.
    private func project(_ request: Request) async throws -> (FirebaseProject, Project) {
        guard let key = request.uri.queryParameters["key"].map(String.init),
            let found = try await projects.project(apiKey: key)
        else { throw FirebaseError.invalidAPIKey }
        return found
    }

    /// The language of the code message: `X-Firebase-Locale` (the app's `Auth.languageCode`), else
    /// `Accept-Language`, when Verity has templates for it.
    private static func locale(_ request: Request) -> String? {
        let candidates = [
            HTTPField.Name("X-Firebase-Locale").flatMap { request.headers[$0] },
            request.headers[.acceptLanguage]?.split(separator: ",").first.map {
                String($0.split(separator: ";")[0]).trimmingCharacters(in: .whitespaces)
            },
        ]
        return candidates.compactMap { $0 }.first { (try? VerificationService.language(for: $0)) != nil }
    }

    private static func tokens(_ signedIn: AuthResponse, in project: Project) -> [String: JSONValue] {
        [
            "kind": .string("identitytoolkit#VerifyPhoneNumberResponse"), "idToken": .string(signedIn.sessionJwt),
            "refreshToken": signedIn.refreshToken.map(JSONValue.string) ?? .null,
            "expiresIn": .string("\(project.settings.sessionLifetime)"), "localId": .string(signedIn.user.id),
        ]
    }

    private static func phoneNumber(of user: User) -> String? {
        user.loginIds.first { $0.hasPrefix("+") }
    }

    /// A user as `accounts:lookup` describes one (times in milliseconds, as strings).
    static func account(_ user: User) -> JSONValue {
        let milliseconds = { (date: Date) in JSONValue.string("\(Int64(date.timeIntervalSince1970 * 1000))") }
        var account: [String: JSONValue] = [
            "localId": .string(user.id), "emailVerified": .bool(false), "createdAt": milliseconds(user.createdAt),
            "lastLoginAt": milliseconds(user.lastSignInAt ?? user.createdAt), "disabled": .bool(user.disabled),
        ]
        if let name = user.displayName { account["displayName"] = .string(name) }
        if let phone = phoneNumber(of: user) {
            account["phoneNumber"] = .string(phone)
            account["providerUserInfo"] = .array([
                .object(["providerId": .string("phone"), "rawId": .string(phone), "phoneNumber": .string(phone)])
            ])
        }
        if !user.customClaims.isEmpty, let claims = try? JSONEncoder().encode(user.customClaims) {
            account["customAttributes"] = .string(String(decoding: claims, as: UTF8.self))
        }
        return .object(account)
    }

    static func decode<Body: Decodable>(_ type: Body.Type, _ request: Request, _ context: VerityRequestContext)
        async throws -> Body
    {
        do {
            return try await request.decodeJSON(type, context: context)
        } catch let error as VerityError where error.code == .invalidRequest || error.code == .malformedJSON {
            throw FirebaseError.badRequest("INVALID_ARGUMENT : the body must be a JSON object")
        }
    }

    private static func tokenFields(_ request: Request, _ context: VerityRequestContext) async throws -> TokenRequest {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            return try await decode(TokenRequest.self, request, context)
        }
        let body = try await request.collectBody()
        guard let pairs = URLEncodedForm.validPairs(Substring(String(buffer: body))) else {
            throw FirebaseError.badRequest("INVALID_ARGUMENT : the body is not form-encoded")
        }
        let fields = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        return TokenRequest(grantType: fields["grant_type"], refreshToken: fields["refresh_token"])
    }
}

private struct SendVerificationCodeRequest: Decodable {
    var phoneNumber: String?
}

private struct SignInWithPhoneNumberRequest: Decodable {
    var sessionInfo: String?
    var code: String?
    /// Linking a number to a signed-in user, which the face does not do.
    var idToken: String?
    var temporaryProof: String?
}

private struct LookupRequest: Decodable {
    var idToken: String?
}

private struct TokenRequest: Decodable {
    var grantType: String?
    var refreshToken: String?
}

extension SessionTokenDialect {
    /// Firebase ID tokens: `iss` `https://securetoken.google.com/<project>`, `aud` the Firebase project id, and the
    /// claims the Firebase SDKs and firebase-admin read (`user_id`, `phone_number`, `firebase`).
    static func firebase(_ link: FirebaseProject) -> SessionTokenDialect {
        SessionTokenDialect(
            issuer: "https://securetoken.google.com/\(link.firebaseProjectId)", audience: link.firebaseProjectId
        ) { user in
            let phones = user.loginIds.filter { $0.hasPrefix("+") }
            var claims: [String: JSONValue] = [
                "user_id": .string(user.id),
                "firebase": .object([
                    "identities": .object(phones.isEmpty ? [:] : ["phone": .array(phones.map(JSONValue.string))]),
                    "sign_in_provider": .string("phone"),
                ]),
            ]
            if let phone = phones.first { claims["phone_number"] = .string(phone) }
            return claims
        }
    }
}
