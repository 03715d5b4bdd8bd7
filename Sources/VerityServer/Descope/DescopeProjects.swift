import Foundation
import HTTPTypes
import Hummingbird
import VerityCore

/// How the face finds the project a request names: by its Verity project id, or by the Descope project id the admin
/// gave it (``ProjectSettings/descopeProjectId``).
struct DescopeProjects {
    let admin: AdminService

    /// The project of the bearer's project id, which `x-descope-project-id` must not contradict.
    func project(_ bearer: DescopeBearer, _ request: Request) async throws -> Project {
        if let named = HTTPField.Name("x-descope-project-id").flatMap({ request.headers[$0] }),
            named != bearer.projectId
        {
            throw DescopeError.unauthorized("The project id of the header and of the bearer value differ.")
        }
        return try await project(id: bearer.projectId)
    }

    func project(id: String) async throws -> Project {
        let found =
            if id.hasPrefix("prj_") {
                try await admin.findProject(id: id)
            } else {
                try await admin.findProject(descopeProjectId: id)
            }
        guard let found else { throw DescopeError.unauthorized("There is no project with this id.") }
        return found
    }

    /// The project of a management call: the key (a Verity API key) must belong to the project the bearer names.
    func managedProject(_ request: Request) async throws -> Project {
        let bearer = try DescopeBearer(request)
        guard let key = bearer.managementKey ?? bearer.secret else {
            throw DescopeError.unauthorized(
                "Management calls send `Authorization: Bearer <projectId>:<managementKey>`; the key is a Verity API "
                    + "key of the project.")
        }
        guard let project = try await admin.project(forAPIKey: key), project.isNamed(bearer.projectId) else {
            throw DescopeError.unauthorized("The management key is unknown, revoked or of another project.")
        }
        return project
    }
}
