import Foundation

/// Projects and API keys: what `verity admin` does, and how a request's key or project id finds its project.
public struct AdminService: Sendable, UsesRuntime {
    private let projects: ProjectStore
    let webhookAddresses: OutboundAddressPolicy
    let runtime: Runtime

    init(
        projects: ProjectStore, webhookAddresses: OutboundAddressPolicy, runtime: Runtime
    ) {
        self.projects = projects
        self.webhookAddresses = webhookAddresses
        self.runtime = runtime
    }

    /// The project `id` with the version a settings change compares against. For tests only: a seam for the
    /// compare-and-set that ``update(_:ifVersion:)`` makes.
    func projectForUpdate(id: String) async throws -> (Project, version: Int64)? {
        try await projects.projectForUpdate(id: id)
    }

    /// Writes `project`'s settings only if it is still at `version`; false when it changed since. For tests only (see
    /// ``projectForUpdate(id:)``).
    func update(_ project: Project, ifVersion version: Int64) async throws -> Bool {
        try await projects.update(project, ifVersion: version)
    }

    /// Stores a key under a secret hash of the caller's choosing. For tests only: a key Verity never issues (an
    /// operator's own row), which every face must still refuse by its shape.
    func insertKey(_ key: APIKey, secretHash: String) async throws {
        try await projects.insertKey(key, secretHash: secretHash)
    }

    /// A new secret key. `secret` is shown once and never stored.
    public struct CreatedKey: Sendable, Codable {
        public var key: APIKey
        public var secret: String
    }

    /// Creates a project with its first API key.
    public func createProject(name: String, settings: ProjectSettings = .init()) async throws -> (
        project: Project, key: CreatedKey
    ) {
        let project = Project(
            id: identifiers.make("prj"), name: try Self.listedName(name, of: "project"),
            settings: try settings.validated(), createdAt: clock.now())
        try requirePublicEndpoints(project.settings)
        if let descopeId = project.settings.descopeProjectId,
            try await projects.project(descopeProjectId: descopeId) != nil
        {
            throw ConfigurationError("Another project has the Descope project id \(descopeId).")
        }
        try await projects.insert(project)
        return (project, try await createKey(projectId: project.id, name: "default"))
    }

    public func project(id: String) async throws -> Project {
        guard let project = try await projects.project(id: id) else {
            throw ConfigurationError("There is no project \(id).")
        }
        return project
    }

    /// The project `id`, or nil when there is none; an id not of a project id's shape (``isProjectId(_:)``) is never
    /// looked up.
    func findProject(id: String) async throws -> Project? {
        guard Self.isProjectId(id) else { return nil }
        return try await projects.project(id: id)
    }

    /// Whether `id` has the shape of a project id: `prj_…`, at most 64 characters.
    static func isProjectId(_ id: String) -> Bool {
        id.hasPrefix("prj_") && id.utf8.count <= 64
    }

    /// The project the Descope face knows by `descopeProjectId`, or nil when there is none; an id no project could
    /// be given (``ProjectSettings/isDescopeProjectId(_:)``) is never looked up.
    func findProject(descopeProjectId: String) async throws -> Project? {
        guard ProjectSettings.isDescopeProjectId(descopeProjectId) else { return nil }
        return try await projects.project(descopeProjectId: descopeProjectId)
    }

    /// The project an active API key belongs to; nil for an unknown or revoked key, or one not of a key's shape.
    func project(forAPIKey secret: String) async throws -> Project? {
        try await projectAndKeyId(forAPIKey: secret)?.project
    }

    /// The project an active API key belongs to, and the key's id; nil for an unknown or revoked key, or one not of
    /// a key's shape (``APIKeySecret/isWellFormed(_:)``), which is never looked up.
    func projectAndKeyId(forAPIKey secret: String) async throws -> (project: Project, keyId: String)? {
        guard APIKeySecret.isWellFormed(secret) else { return nil }
        return try await projects.projectAndKeyId(forKeyHash: SecretHash.hex(secret))
    }

    /// Gives the project a webhook signing secret, unless it has one already.
    func ensureWebhookSecret(projectId: String) async throws {
        _ = try await projects.setWebhookSecret(
            "whsec_" + identifiers.secret(bytes: 32), projectId: projectId, replacing: false)
    }

    public func listProjects() async throws -> [Project] {
        try await projects.projects()
    }

    /// The apps `host` vouches for as users of its projects' passkeys (see ``PasskeyAppAssociation``).
    func passkeyApps(host: String) async throws -> PasskeyAppAssociation {
        PasskeyAppAssociation(host: host, projects: try await projects.projects())
    }

    /// Changes a project's name or settings; nil leaves a value as it is. `settings` is applied to the stored
    /// settings and written only if nobody changed them meanwhile (compare and set); otherwise it is applied again
    /// to the newer ones, so concurrent changes all stay.
    public func updateProject(id: String, name: String?, settings: (inout ProjectSettings) -> Void) async throws
        -> Project
    {
        for _ in 0..<Self.updateTries {
            guard var (project, version) = try await projects.projectForUpdate(id: id) else {
                throw ConfigurationError("There is no project \(id).")
            }
            if let name { project.name = try Self.listedName(name, of: "project") }
            settings(&project.settings)
            project.settings = try project.settings.validated()
            try requirePublicEndpoints(project.settings)
            do {
                if try await projects.update(project, ifVersion: version) { return project }
            } catch ProjectStore.WriteError.descopeProjectIdTaken {
                throw ConfigurationError(
                    "Another project has the Descope project id \(project.settings.descopeProjectId ?? "").")
            }
        }
        throw VerityError(.conflict, "The project's settings kept changing under this update; try again.")
    }

    /// Refuses carrier-check endpoints that point inward, under the rules for webhook URLs: Verity calls them with
    /// the project's client secret.
    private func requirePublicEndpoints(_ settings: ProjectSettings) throws(ConfigurationError) {
        guard settings.carrierCheck.enabled else { return }
        for (name, url) in settings.carrierCheck.urls {
            if let refused = webhookAddresses.refusal(of: url) {
                throw ConfigurationError(
                    "The carrier check's \(name) \(refused) (VERITY_WEBHOOK_ALLOW_PRIVATE=true allows private addresses)."
                )
            }
        }
    }

    /// A project's or a key's name without the white space around it: 1 to 100 characters on one line, as the console,
    /// the CLI and every message that names the project (`Your Acme verification code is …`) show it.
    private static func listedName(_ name: String, of what: String) throws -> String {
        guard let trimmed = name.trimmedLine(of: 1...100) else {
            throw ConfigurationError("A \(what) name must be 1 to 100 characters on one line.")
        }
        return trimmed
    }

    /// How many times ``updateProject(id:name:settings:)`` reads again after a concurrent change won.
    static let updateTries = 20

    /// Points the project's challenge events at `url` (nil turns them off). A new signing secret is made when
    /// there is none yet, or when `rotateSecret` is set; it is returned so the operator can configure the receiver.
    public func setWebhook(projectId: String, url: String?, rotateSecret: Bool = false) async throws -> Project {
        _ = try await project(id: projectId)
        if let url {
            if let refused = webhookAddresses.refusal(of: url) {
                throw ConfigurationError(
                    "The webhook URL \(refused) (VERITY_WEBHOOK_ALLOW_PRIVATE=true allows private addresses).")
            }
            try await projects.setWebhookSecret(
                "whsec_" + identifiers.secret(bytes: 32), projectId: projectId, replacing: rotateSecret)
        }
        try await projects.setWebhookURL(url, projectId: projectId)
        return try await project(id: projectId)
    }

    /// Creates a secret API key named `name` (1 to 100 characters on one line, surrounding white space dropped).
    public func createKey(projectId: String, name: String) async throws -> CreatedKey {
        let name = try Self.listedName(name, of: "key")
        _ = try await project(id: projectId)
        let secret = APIKeySecret.prefix + identifiers.secret(bytes: 32)
        let key = APIKey(
            id: identifiers.make("key"), projectId: projectId, name: name, prefix: String(secret.prefix(10)),
            createdAt: clock.now(), revokedAt: nil)
        try await projects.insertKey(key, secretHash: SecretHash.hex(secret))
        return CreatedKey(key: key, secret: secret)
    }

    public func listKeys(projectId: String) async throws -> [APIKey] {
        _ = try await project(id: projectId)
        return try await projects.keys(projectId: projectId)
    }

    public func revokeKey(id: String, projectId: String) async throws {
        guard try await projects.revokeKey(id: id, projectId: projectId, at: clock.now()) else {
            throw ConfigurationError("Project \(projectId) has no active key \(id).")
        }
    }
}
