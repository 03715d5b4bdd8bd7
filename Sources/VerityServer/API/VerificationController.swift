import Hummingbird
import VerityCore

extension VerificationResponse: ResponseEncodable {}
extension CheckVerificationResponse: ResponseEncodable {}

/// `/v1/verifications`: start, check, fetch and cancel one-time-code verifications.
struct VerificationController {
    let service: VerificationService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post(use: start)
        group.post("check", use: check)
        group.get(":id", use: fetch)
        group.post(":id/cancel", use: cancel)
    }

    @Sendable func start(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<VerificationResponse>
    {
        try await request.created(StartVerificationRequest.self, context: context) {
            try await service.start($0, in: $1)
        }
    }

    @Sendable func check(_ request: Request, context: VerityRequestContext) async throws -> CheckVerificationResponse {
        let body = try await request.decodeJSON(CheckVerificationRequest.self, context: context)
        return try await service.check(body, in: try context.requireProject())
    }

    @Sendable func fetch(_ request: Request, context: VerityRequestContext) async throws -> VerificationResponse {
        try await service.fetch(id: try context.parameters.require("id"), in: try context.requireProject())
    }

    @Sendable func cancel(_ request: Request, context: VerityRequestContext) async throws -> VerificationResponse {
        try await service.cancel(id: try context.parameters.require("id"), in: try context.requireProject())
    }
}
