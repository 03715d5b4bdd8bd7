import Hummingbird
import VerityCore

extension EnrolledPushFactor: ResponseEncodable {}
extension Factor: ResponseEncodable {}
extension DeviceChallenge: ResponseEncodable {}
extension Page: ResponseEncodable {}

/// `/v1/device/factors`: what an app does with its enrollment token and, after that, its factor key.
struct DeviceController {
    let factors: FactorService
    let challenges: ChallengeService

    /// `enrollment` routes take the enrollment token; `signed` routes sit behind ``DeviceAuthenticator``, and so does
    /// `answering`, the answer route, which reads the challenge with the factor and spends the device token with the
    /// answer.
    func addRoutes(
        enrollment: RouterGroup<VerityRequestContext>, signed: RouterGroup<VerityRequestContext>,
        answering: RouterGroup<VerityRequestContext>
    ) {
        enrollment.post(use: enroll)
        enrollment.post(":factorId/verify", use: verify)
        signed.patch(use: update)
        signed.delete(use: delete)
        signed.get("challenges", use: listChallenges)
        signed.get("challenges/:challengeId", use: getChallenge)
        signed.put("user-verification-key", use: setUserVerificationKey)
        signed.delete("user-verification-key", use: removeUserVerificationKey)
        signed.post("rotate-key", use: rotateKey)
        answering.post(use: respond)
    }

    @Sendable func setUserVerificationKey(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        let body = try await request.decodeJSON(SetUserVerificationKeyRequest.self, context: context)
        return try await factors.setUserVerificationKey(try context.requireDeviceFactor(), body)
    }

    @Sendable func removeUserVerificationKey(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        try await factors.removeUserVerificationKey(try context.requireDeviceFactor())
    }

    @Sendable func rotateKey(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        let body = try await request.decodeJSON(RotateFactorKeyRequest.self, context: context)
        return try await factors.rotateKey(try context.requireDeviceFactor(), body)
    }

    @Sendable func enroll(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<EnrolledPushFactor>
    {
        let token = try Self.enrollmentToken(request)
        let body = try await request.decodeJSON(CreatePushFactorRequest.self, context: context)
        return EditedResponse(status: .created, response: try await factors.enroll(body, enrollmentToken: token))
    }

    @Sendable func verify(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        let token = try Self.enrollmentToken(request)
        let body = try await request.decodeJSON(VerifyPushFactorRequest.self, context: context)
        return try await factors.verifyPushFactor(
            id: try context.pathParameter("factorId"), signature: body.signature, enrollmentToken: token)
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        let body = try await request.decodeJSON(UpdateFactorRequest.self, context: context)
        return try await factors.update(try context.requireDeviceFactor(), with: body)
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await factors.delete(try context.requireDeviceFactor())
        return Response(status: .noContent)
    }

    @Sendable func listChallenges(_ request: Request, context: VerityRequestContext) async throws
        -> Page<DeviceChallenge>
    {
        if let status = request.uri.queryParameters["status"], status != "pending" {
            throw VerityError(.invalidRequest, "Devices can list `pending` challenges only.")
        }
        return try await challenges.pending(
            for: try context.requireDeviceFactor(), cursor: request.cursor,
            limit: try request.queryInteger("limit"))
    }

    @Sendable func getChallenge(_ request: Request, context: VerityRequestContext) async throws -> DeviceChallenge {
        try await challenges.deviceChallenge(
            id: try context.pathParameter("challengeId"), for: try context.requireDeviceFactor())
    }

    @Sendable func respond(_ request: Request, context: VerityRequestContext) async throws -> DeviceChallenge {
        let body: RespondChallengeRequest
        do {
            body = try await request.decodeJSON(RespondChallengeRequest.self, context: context)
        } catch {
            throw try await factors.refusal(error, spending: context.deviceTokenUse)
        }
        return try await challenges.respond(
            id: try context.pathParameter("challengeId"), body, factor: try context.requireDeviceFactor(),
            challenge: context.answeredChallenge, spending: context.deviceTokenUse)
    }

    private static func enrollmentToken(_ request: Request) throws -> String {
        try FactorService.wellFormedEnrollmentToken(request.bearerToken)
    }
}
