import Hummingbird
import VerityCore

extension AppAttestChallenge: ResponseEncodable {}
extension AppAttestKeyRegistered: ResponseEncodable {}

/// `/v1/auth/app-attest`: what an iOS app calls, named by the public project id in `X-Verity-Project`, to attest its
/// App Attest key once and to fetch the single-use challenge each assertion binds.
struct AppAttestController {
    let appAttest: AppAttestService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("challenges", use: challenge)
        group.post("keys", use: register)
    }

    @Sendable func challenge(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<AppAttestChallenge>
    {
        EditedResponse(
            status: .created,
            response: try await appAttest.challenge(
                clientAddress: context.clientAddress, in: try context.requireProject()))
    }

    @Sendable func register(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<AppAttestKeyRegistered>
    {
        try await request.created(AppAttestKeyRequest.self, context: context) {
            try await appAttest.register($0, in: $1)
        }
    }
}
