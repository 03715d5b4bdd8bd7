import Hummingbird
import VerityCore

extension OTPStartResponse: ResponseEncodable {}
extension AuthResponse: ResponseEncodable {}
extension MeResponse: ResponseEncodable {}
extension StepUpStartResponse: ResponseEncodable {}
extension AppVerificationStarted: ResponseEncodable {}

/// `/v1/auth`: what apps call to sign users in, named by the public project id in `X-Verity-Project`. Signed-in
/// calls add `Authorization: Bearer <sessionJwt>`.
struct AuthController {
    let auth: AuthService
    let sessions: SessionService
    let appVerifications: AppVerificationService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("app-verification", use: startAppVerification)
        group.post("otp/start", use: startOTP)
        group.post("otp/verify", use: verifyOTP)
        group.post("refresh", use: refresh)
        group.post("logout", use: logout)
        group.post("logout-all", use: logoutAll)
        group.get("me", use: me)
        group.post("stepup/start", use: startStepUp)
        group.post("stepup/verify", use: verifyStepUp)
    }

    @Sendable func startOTP(_ request: Request, context: VerityRequestContext) async throws -> OTPStartResponse {
        let body = try await request.decodeJSON(OTPStartRequest.self, context: context)
        return try await auth.start(
            body, clientAddress: context.clientAddress, appProof: request.appVerificationProof,
            in: try context.requireProject())
    }

    @Sendable func startAppVerification(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<AppVerificationStarted>
    {
        let body = try await request.decodeJSON(AppVerificationRequest.self, context: context)
        return EditedResponse(
            status: .accepted,
            response: try await appVerifications.start(
                body, clientAddress: context.clientAddress, in: try context.requireProject()))
    }

    @Sendable func verifyOTP(_ request: Request, context: VerityRequestContext) async throws -> AuthResponse {
        let body = try await request.decodeJSON(OTPVerifyRequest.self, context: context)
        return try await auth.verify(body, clientAddress: context.clientAddress, in: try context.requireProject())
    }

    @Sendable func refresh(_ request: Request, context: VerityRequestContext) async throws -> AuthResponse {
        let body = try await request.decodeJSON(RefreshRequest.self, context: context)
        return try await auth.refresh(
            body.refreshToken, clientAddress: context.clientAddress, in: try context.requireProject())
    }

    /// Ends one session: the one of the refresh token in the body, or else of the session token.
    @Sendable func logout(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let project = try context.requireProject()
        let body = try await request.decodeJSON(LogoutRequest.self, context: context, empty: LogoutRequest())
        if let refreshToken = body.refreshToken {
            try await auth.logout(refreshToken: refreshToken, clientAddress: context.clientAddress, in: project)
        } else {
            try await auth.logout(
                sessionToken: request.bearerToken, clientAddress: context.clientAddress, in: project)
        }
        return Response(status: .noContent)
    }

    @Sendable func logoutAll(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await auth.logoutAll(
            sessionToken: request.bearerToken, clientAddress: context.clientAddress, in: try context.requireProject())
        return Response(status: .noContent)
    }

    @Sendable func me(_ request: Request, context: VerityRequestContext) async throws -> MeResponse {
        let project = try context.requireProject()
        return try await sessions.me(
            try await sessions.authenticate(bearer: request.bearerToken, in: project), in: project)
    }

    @Sendable func startStepUp(_ request: Request, context: VerityRequestContext) async throws -> StepUpStartResponse {
        let project = try context.requireProject()
        let auth = try await sessions.authenticate(bearer: request.bearerToken, in: project)
        let body = try await request.decodeJSON(StepUpStartRequest.self, context: context, empty: StepUpStartRequest())
        return try await self.auth.startStepUp(
            body, auth: auth, clientAddress: context.clientAddress, appProof: request.appVerificationProof, in: project)
    }

    @Sendable func verifyStepUp(_ request: Request, context: VerityRequestContext) async throws -> AuthResponse {
        let project = try context.requireProject()
        let auth = try await sessions.authenticate(bearer: request.bearerToken, in: project)
        let body = try await request.decodeJSON(StepUpVerifyRequest.self, context: context)
        return try await self.auth.verifyStepUp(body, auth: auth, clientAddress: context.clientAddress, in: project)
    }
}

/// `POST /v1/auth/logout`: the refresh token of the session to end; without it, the session token's session ends.
private struct LogoutRequest: Decodable {
    var refreshToken: String?
}
