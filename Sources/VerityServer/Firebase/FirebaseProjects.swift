import Foundation
import VerityCore

/// Names projects for the Firebase face and finds them by key.
public struct FirebaseProjects: Sendable, UsesRuntime {
    private let store: FirebaseProjectStore
    let admin: AdminService
    let runtime: Runtime

    init(store: FirebaseProjectStore, admin: AdminService, runtime: Runtime) {
        self.store = store
        self.admin = admin
        self.runtime = runtime
    }

    /// Names a project for the Firebase face (its Verity id when `firebaseProjectId` is nil), keeping its API key
    /// when it has one.
    ///
    /// - Throws: `invalid_request` for a Firebase project id that is not 4 to 30 lowercase letters, digits and
    ///   hyphens, `conflict` when another project has it, `project_not_found`.
    public func name(projectId: String, firebaseProjectId: String? = nil) async throws -> FirebaseProject {
        _ = try await admin.project(id: projectId)
        let existing = try await store.link(projectId: projectId)
        let id = firebaseProjectId ?? existing?.firebaseProjectId ?? projectId.replacingOccurrences(of: "_", with: "-")
        guard (4...30).contains(id.count), id.first?.isLetter == true,
            id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") })
        else {
            throw VerityError(
                .invalidRequest, "A Firebase project id is 4 to 30 lowercase letters, digits and hyphens.")
        }
        let link = FirebaseProject(
            projectId: projectId, firebaseProjectId: id,
            apiKey: existing?.apiKey ?? "AIza" + Base64URL.encode(random.bytes(count: 26)).prefix(35),
            createdAt: existing?.createdAt ?? clock.now())
        guard let named = try await store.name(link) else {
            throw VerityError(.conflict, "Another project is Firebase project \(id).")
        }
        return named
    }

    /// The project's Firebase names, if it has them.
    public func link(projectId: String) async throws -> FirebaseProject? {
        try await store.link(projectId: projectId)
    }

    /// The project an app's API key names.
    func project(apiKey: String) async throws -> (FirebaseProject, Project)? {
        guard apiKey.hasPrefix("AIza"), apiKey.count <= 64 else { return nil }
        return try await project(of: try await store.link(apiKey: apiKey))
    }

    /// The project a Firebase project id names.
    func project(firebaseProjectId: String) async throws -> (FirebaseProject, Project)? {
        guard firebaseProjectId.count <= 64 else { return nil }
        return try await project(of: try await store.link(firebaseProjectId: firebaseProjectId))
    }

    private func project(of link: FirebaseProject?) async throws -> (FirebaseProject, Project)? {
        guard let link, let project = try await admin.findProject(id: link.projectId) else { return nil }
        return (link, project)
    }
}
