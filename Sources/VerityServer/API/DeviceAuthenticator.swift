import HTTPTypes
import Hummingbird
import VerityCore

/// Authenticates device requests: `Authorization: Bearer <JWS>` signed by the factor named in the path.
///
/// The token's single use is spent here, before the route runs, except on the answer route (`answering`): there the
/// factor is read with the challenge the path names, and the answer spends the token in its own write, or alone
/// when it makes none.
struct DeviceAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let factors: FactorService
    /// Set on the answer route (`…/challenges/:challengeId/respond`).
    var answering: ChallengeService? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let token = request.bearerToken else {
            throw VerityError(.unauthorized, "Send a device token signed by the factor key as `Authorization: Bearer`.")
        }
        var context = context
        let (factor, use): (FactorRecord, FactorService.DeviceTokenUse?)
        if let answering {
            let checked = try await answering.authenticateAnswer(
                token: token, challengeId: try context.pathParameter("challengeId"))
            (factor, use) = (checked.factor, checked.use)
            context.answeredChallenge = checked.challenge
        } else {
            (factor, use) = try await factors.checkDeviceToken(token)
        }
        guard try context.pathParameter("factorId") == factor.id else {
            if let use { try await factors.spend(use) }
            throw VerityError(.wrongFactor, "The device token is for another factor.")
        }
        context.deviceFactor = factor
        if let use {
            if answering != nil { context.deviceTokenUse = use } else { try await factors.spend(use) }
        }
        return try await next(request, context)
    }
}

extension Request {
    /// The credential of an `Authorization: Bearer …` header (at most 16 KiB).
    var bearerToken: String? {
        guard let header = headers[.authorization], header.hasPrefix("Bearer "), header.utf8.count <= 16_384 else {
            return nil
        }
        let token = header.dropFirst("Bearer ".count).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The app verification proof (`X-Verity-App-Verification`) of a request that sends a code.
    var appVerificationProof: String? {
        guard let name = HTTPField.Name(AuthHeaders.appVerification) else { return nil }
        return headers[name]
    }
}
