import HTTPTypes
import Hummingbird
import VerityCore

/// Authenticates device requests: `Authorization: Bearer <JWS>` signed by the factor named in the path.
struct DeviceAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let factors: FactorService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let token = request.bearerToken else {
            throw VerityError(.unauthorized, "Send a device token signed by the factor key as `Authorization: Bearer`.")
        }
        let factor = try await factors.authenticateDevice(token: token)
        guard try context.pathParameter("factorId") == factor.id else {
            throw VerityError(.wrongFactor, "The device token is for another factor.")
        }
        var context = context
        context.deviceFactor = factor
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
