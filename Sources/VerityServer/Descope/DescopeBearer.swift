import Foundation
import HTTPTypes
import Hummingbird
import VerityCore

/// `Authorization: Bearer <projectId>[:<secret>[:<managementKey>]]`, the one credential header of Descope's SDKs:
/// the project alone on sign-in calls, with the refresh JWT on session calls, with the management key on management
/// calls, and with both when python-sdk holds an auth management key.
struct DescopeBearer: Equatable {
    var projectId: String
    /// The refresh JWT (or, with two parts on a management call, the management key).
    var secret: String?
    /// The third part, when there is one.
    var managementKey: String?

    init(projectId: String, secret: String? = nil, managementKey: String? = nil) {
        self.projectId = projectId
        self.secret = secret
        self.managementKey = managementKey
    }

    /// The header's parts; a missing or malformed header is refused in Descope's shape.
    init(_ request: Request) throws {
        guard let header = request.headers[.authorization], header.utf8.count <= 16_384,
            header.lowercased().hasPrefix("bearer ")
        else { throw DescopeError.unauthorized("Send `Authorization: Bearer <projectId>`.") }
        let parts = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            .split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else {
            throw DescopeError.unauthorized(
                "The bearer value is `<projectId>`, `<projectId>:<refreshJwt>` or `<projectId>:<managementKey>`.")
        }
        self.init(
            projectId: parts[0], secret: parts.count > 1 ? parts[1] : nil,
            managementKey: parts.count > 2 ? parts[2] : nil)
    }
}

extension Project {
    /// The id the Descope face's tokens name: the Descope project id the admin gave the project, or its own.
    var descopeId: String { settings.descopeProjectId ?? id }

    /// Whether a Descope request's project id names this project (its Verity id or its Descope project id).
    func isNamed(_ projectId: String) -> Bool {
        projectId == id || projectId == settings.descopeProjectId
    }
}

extension Request {
    /// Decodes a Descope JSON body; an empty body is `empty` when given.
    func decodeDescope<Body: Decodable>(_ type: Body.Type, context: VerityRequestContext, empty: Body? = nil)
        async throws -> Body
    {
        do {
            return try await decodeJSON(type, context: context, empty: empty)
        } catch let error as VerityError where error.code == .invalidRequest {
            throw DescopeError.badRequest(error.detail ?? "The body is not valid.")
        }
    }
}

extension SessionTokenDialect {
    /// Descope's tokens: `iss` and `aud` the project id (python-sdk takes the issuer's last path segment as the
    /// project and accepts an audience only when it is the project id), `drn` `DS` on session tokens and `DSR` on
    /// refresh tokens, which are signed JWTs because the SDKs validate them before refreshing, and `su` on the
    /// session token a step-up issues. `loginOptions.customClaims` are nested under `nsec`, as Descope does with
    /// claims a client asks for (they are not to be trusted like the user's own custom claims).
    static func descope(_ project: Project) -> SessionTokenDialect {
        SessionTokenDialect(
            issuer: project.descopeId, audience: project.descopeId, claims: { _ in ["drn": .string("DS")] },
            stepUpClaims: ["su": .bool(true)], refreshTokenClaims: ["drn": .string("DSR")], sessionClaimsKey: "nsec")
    }
}
