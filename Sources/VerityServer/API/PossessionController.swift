import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

extension StartedPossession: ResponseEncodable {}
extension PossessionState: ResponseEncodable {}
extension PossessionValidation: ResponseEncodable {}

/// `/v1/possession`: the backend starts and validates possession checks (API key); the app runs one with its auth
/// token (`Authorization: Bearer vpt_…`).
struct PossessionController {
    let possession: PossessionService
    let admin: AdminService

    func addRoutes(backend: RouterGroup<VerityRequestContext>, router: Router<VerityRequestContext>) {
        backend.post("possession", use: start)
        backend.post("possession/:correlationId/validate", use: validate)
        let app = router.group("v1/possession/:correlationId")
            .add(middleware: PossessionTokenAuthenticator(possession: possession, admin: admin))
        app.get(use: state)
        app.post("otp/start", use: startOTP)
        app.post("otp/finish", use: finishOTP)
        app.post("otp/resend", use: resend)
        app.post("otp/retry", use: retry)
        app.post("otp/change-number", use: changeNumber)
        app.post("link/start", use: startLink)
        app.post("link/resend", use: resend)
        app.post("silent", use: silent)
        // The operator's redirect at the end of a carrier check's front channel: the state is its only credential.
        router.get(RouterPath(CamaraNumberVerification.callbackPath), use: carrierCallback)
    }

    @Sendable func start(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<StartedPossession>
    {
        try await request.created(StartPossessionRequest.self, context: context) {
            try await possession.start($0, in: $1)
        }
    }

    @Sendable func validate(_ request: Request, context: VerityRequestContext) async throws -> PossessionValidation {
        try await possession.validate(id: try context.pathParameter("correlationId"), in: try context.requireProject())
    }

    @Sendable func state(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        let (flow, project) = try context.requirePossession()
        return try await possession.state(flow, wait: try request.queryInteger("wait"), in: project)
    }

    @Sendable func startOTP(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        try await sendToPhone(request, context, empty: PossessionPhoneRequest(), possession.startOTP)
    }

    @Sendable func finishOTP(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        let body = try await request.decodeJSON(PossessionCodeRequest.self, context: context)
        let (flow, project) = try context.requirePossession()
        return try await possession.finishOTP(flow, code: body.code, in: project)
    }

    @Sendable func resend(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        let body = try await request.decodeJSON(
            PossessionResendRequest.self, context: context, empty: PossessionResendRequest())
        let (flow, project) = try context.requirePossession()
        return try await possession.resend(
            flow, channel: body.channel, appProof: request.appVerificationProof, in: project)
    }

    @Sendable func retry(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        let (flow, project) = try context.requirePossession()
        return try await possession.retryOTP(flow, in: project)
    }

    @Sendable func changeNumber(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        try await sendToPhone(request, context, possession.changeNumber)
    }

    @Sendable func startLink(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        try await sendToPhone(request, context, empty: PossessionPhoneRequest(), possession.startLink)
    }

    /// A step that sends a code or link to the body's phone number (or the flow's, when `empty` stands for no
    /// body), with the request's app-verification proof.
    private func sendToPhone(
        _ request: Request, _ context: VerityRequestContext, empty: PossessionPhoneRequest? = nil,
        _ step: (PossessionRecord, String?, VerityCore.Channel?, String?, Project) async throws -> PossessionState
    ) async throws -> PossessionState {
        let body = try await request.decodeJSON(PossessionPhoneRequest.self, context: context, empty: empty)
        let (flow, project) = try context.requirePossession()
        return try await step(flow, body.phoneNumber, body.channel, request.appVerificationProof, project)
    }

    @Sendable func carrierCallback(_ request: Request, context: VerityRequestContext) async throws
        -> PossessionState
    {
        let query = request.uri.queryParameters
        return try await possession.carrierCallback(
            state: query["state"].map(String.init), code: query["code"].map(String.init),
            error: query["error"].map(String.init))
    }

    @Sendable func silent(_ request: Request, context: VerityRequestContext) async throws -> PossessionState {
        let (flow, project) = try context.requirePossession()
        return try await possession.trySilent(flow, clientAddress: context.clientAddress, in: project)
    }
}
