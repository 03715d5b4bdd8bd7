import Hummingbird
import VerityCore

extension EnrollmentToken: ResponseEncodable {}
extension CreatedTOTPFactor: ResponseEncodable {}
extension Challenge: ResponseEncodable {}

/// The backend's side of factors and challenges (API key): enrollment tokens, a user's factors, TOTP, challenges.
struct FactorController {
    let factors: FactorService
    let challenges: ChallengeService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("enrollment-tokens", use: createEnrollmentToken)
        group.get("users/:userId/factors", use: listFactors)
        group.post("users/:userId/factors/totp", use: createTOTPFactor)
        group.post("factors/:factorId/verify", use: verifyTOTPFactor)
        group.get("factors/:factorId", use: getFactor)
        group.delete("factors/:factorId", use: deleteFactor)
        group.post("challenges", use: createChallenge)
        group.get("challenges/:challengeId", use: getChallenge)
    }

    @Sendable func createEnrollmentToken(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<EnrollmentToken>
    {
        try await request.created(CreateEnrollmentTokenRequest.self, context: context) {
            try await factors.createEnrollmentToken($0, in: $1)
        }
    }

    @Sendable func listFactors(_ request: Request, context: VerityRequestContext) async throws -> Page<Factor> {
        try await factors.factors(
            userId: try context.pathParameter("userId"), cursor: request.cursor,
            limit: try request.queryInteger("limit"), in: try context.requireProject())
    }

    @Sendable func createTOTPFactor(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<CreatedTOTPFactor>
    {
        try await request.created(CreateTOTPFactorRequest.self, context: context) {
            try await factors.createTOTPFactor(userId: try context.pathParameter("userId"), $0, in: $1)
        }
    }

    @Sendable func verifyTOTPFactor(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        let body = try await request.decodeJSON(VerifyTOTPFactorRequest.self, context: context)
        return try await factors.verifyTOTPFactor(
            id: try context.pathParameter("factorId"), code: body.code, in: try context.requireProject())
    }

    @Sendable func getFactor(_ request: Request, context: VerityRequestContext) async throws -> Factor {
        try await factors.factor(id: try context.pathParameter("factorId"), in: try context.requireProject()).response
    }

    @Sendable func deleteFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await factors.delete(id: try context.pathParameter("factorId"), in: try context.requireProject())
        return Response(status: .noContent)
    }

    @Sendable func createChallenge(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<Challenge>
    {
        try await request.created(CreateChallengeRequest.self, context: context) {
            try await challenges.create($0, in: $1)
        }
    }

    @Sendable func getChallenge(_ request: Request, context: VerityRequestContext) async throws -> Challenge {
        try await challenges.fetch(
            id: try context.pathParameter("challengeId"), wait: try request.queryInteger("wait"),
            in: try context.requireProject())
    }
}
