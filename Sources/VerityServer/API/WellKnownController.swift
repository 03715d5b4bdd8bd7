import Foundation
import Hummingbird
import NIOCore
import VerityCore

/// The public documents a backend needs to validate session tokens offline: the project's JWKS and an
/// OpenID-style discovery document. No API key: they hold public keys only.
struct WellKnownController {
    let signingKeys: SigningKeyService
    let admin: AdminService
    let publicURL: String

    func addRoutes(to router: Router<VerityRequestContext>) {
        let group = router.group("v1/projects/:projectId/.well-known")
        group.get("jwks.json", use: jwks)
        group.get("openid-configuration", use: configuration)
        // The same key set at the shorter path the design names.
        router.get("v1/projects/:projectId/jwks.json", use: jwks)
    }

    @Sendable func jwks(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let projectId = try await project(context)
        return try Self.json(try await signingKeys.keySet(projectId: projectId))
    }

    @Sendable func configuration(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let projectId = try await project(context)
        let issuer = "\(publicURL)/v1/projects/\(projectId)"
        return try Self.json(
            DiscoveryDocument(
                issuer: issuer, jwksURI: "\(issuer)/.well-known/jwks.json", signingAlgorithms: ["ES256"]))
    }

    private func project(_ context: VerityRequestContext) async throws -> String {
        let id = try context.pathParameter("projectId")
        guard id.hasPrefix("prj_"), id.count <= 64, try await admin.findProject(id: id) != nil else {
            throw VerityError(.projectNotFound, "No project \(id).")
        }
        return id
    }

    /// JSON that caches may keep for a minute: a rotated key is published two minutes before it signs.
    private static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "public, max-age=60"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    private struct DiscoveryDocument: Encodable {
        var issuer: String
        var jwksURI: String
        var signingAlgorithms: [String]

        enum CodingKeys: String, CodingKey {
            case issuer
            case jwksURI = "jwks_uri"
            case signingAlgorithms = "id_token_signing_alg_values_supported"
        }
    }
}
