import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The public documents a backend needs to validate session tokens offline: the project's JWKS and an
/// OpenID-style discovery document; and those an app's associated domain reads to use the passkeys of the projects
/// whose relying-party id is the request's host. No API key: they hold public keys and app ids only.
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
        router.get(".well-known/apple-app-site-association", use: appleAppSiteAssociation)
        router.get(".well-known/assetlinks.json", use: assetLinks)
    }

    /// `webcredentials` for the Apple apps of the host's projects; 404 when there are none.
    @Sendable func appleAppSiteAssociation(_ request: Request, context: VerityRequestContext) async throws
        -> Response
    {
        let apps = try await admin.passkeyApps(host: Self.host(of: request)).appleAppIDs
        guard !apps.isEmpty else { throw Self.noApps }
        return try Self.json(["webcredentials": ["apps": apps]])
    }

    /// One `delegate_permission/common.get_login_creds` statement per Android app of the host's projects; 404 when
    /// there are none.
    @Sendable func assetLinks(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let apps = try await admin.passkeyApps(host: Self.host(of: request)).androidApps
        guard !apps.isEmpty else { throw Self.noApps }
        return try Self.json(
            apps.map { app in
                AssetLink(
                    target: AssetLink.Target(
                        packageName: app.packageName, fingerprints: app.certificateFingerprints))
            })
    }

    /// The request's host without its port: the relying-party id a browser or an app would take from it.
    private static func host(of request: Request) -> String {
        // HTTP/1's Host header is the authority once parsed; a request built in process may carry it as a field.
        let authority = HTTPField.Name("Host").flatMap { request.headers[$0] } ?? request.head.authority ?? ""
        if authority.hasPrefix("[") { return String(authority.prefix { $0 != "]" }) + "]" }
        return String(authority.prefix { $0 != ":" })
    }

    private static let noApps = VerityError(.notFound, "No project on this host names apps for its passkeys.")

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
        guard try await admin.findProject(id: id) != nil else {
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

    /// A Digital Asset Links statement letting an Android app use the host's passkeys.
    private struct AssetLink: Encodable {
        struct Target: Encodable {
            var namespace = "android_app"
            var packageName: String
            var fingerprints: [String]

            enum CodingKeys: String, CodingKey {
                case namespace
                case packageName = "package_name"
                case fingerprints = "sha256_cert_fingerprints"
            }
        }

        var relation = ["delegate_permission/common.get_login_creds"]
        var target: Target
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
