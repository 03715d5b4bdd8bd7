import Hummingbird
import VerityCore

extension ProjectSummary: ResponseEncodable {}

/// `/v1/project`: the calling project's device-trust settings (API key).
struct ProjectController {
    let admin: AdminService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("project", use: get)
        group.patch("project", use: update)
    }

    @Sendable func get(_ request: Request, context: VerityRequestContext) async throws -> ProjectSummary {
        try context.requireProject().apiView
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> ProjectSummary {
        let body = try await request.decodeJSON(UpdateProjectRequest.self, context: context)
        return try await admin.updateProject(id: try context.requireProject().id, name: nil) { settings in
            if let response = body.unusualActivityResponse { settings.unusualActivityResponse = response }
        }.apiView
    }
}

extension Project {
    /// What the project API shows of the project.
    var apiView: ProjectSummary {
        ProjectSummary(id: id, name: name, unusualActivityResponse: settings.unusualActivityResponse)
    }
}
