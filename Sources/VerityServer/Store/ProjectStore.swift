import Foundation
import SQLKit
import VerityCore

/// Projects and their API keys.
struct ProjectStore: Sendable {
    let database: Database
    /// Seals the webhook signing secret at rest, bound to its project's id.
    let webhookSecrets: SecretSealer

    private static let projectColumns =
        """
        id, name, code_length, code_ttl_seconds, allowed_countries, created_at, webhook_url, webhook_secret, \
        session_ttl_seconds, refresh_ttl_seconds, possession_ttl_seconds, possession_code_ttl_seconds, \
        requires_app_verification, disabled_channels, fallback_channel, unusual_activity_response, descope_cookies, \
        descope_project_id, firebase_emulator_admin, carrier_check, carrier_client_secret, app_attest_enabled, \
        app_attest_team_id, app_attest_bundle_id, app_attest_environment, passkeys
        """

    /// ``projectColumns`` of `projects p` in a join.
    private static let joinedColumns = qualified(projectColumns, by: "p")

    func insert(_ project: Project) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO projects (id, name, code_length, code_ttl_seconds, allowed_countries, created_at,
                                      session_ttl_seconds, refresh_ttl_seconds, possession_ttl_seconds,
                                      possession_code_ttl_seconds, requires_app_verification, disabled_channels,
                                      fallback_channel, unusual_activity_response, descope_cookies,
                                      descope_project_id, firebase_emulator_admin, carrier_check,
                                      carrier_client_secret, app_attest_enabled,
                                      app_attest_team_id, app_attest_bundle_id, app_attest_environment,
                                      passkeys)
                VALUES (\(bind: project.id), \(bind: project.name), \(bind: project.settings.codeLength),
                        \(bind: project.settings.codeLifetime), \(bind: Self.encode(project.settings.allowedCountries)),
                        \(bind: project.createdAt.storedValue), \(bind: project.settings.sessionLifetime),
                        \(bind: project.settings.refreshLifetime), \(bind: project.settings.possessionLifetime),
                        \(bind: project.settings.possessionCodeLifetime),
                        \(bind: project.settings.requiresAppVerification ? 1 : 0),
                        \(bind: Self.encode(project.settings.disabledChannels)),
                        \(bind: project.settings.fallbackChannel?.rawValue),
                        \(bind: project.settings.unusualActivityResponse.rawValue),
                        \(bind: project.settings.descopeCookies ? 1 : 0), \(bind: project.settings.descopeProjectId),
                        \(bind: project.settings.firebaseEmulatorAdmin.rawValue),
                        \(bind: try Self.encode(project.settings.carrierCheck)),
                        \(bind: try sealedCarrierSecret(of: project)),
                        \(bind: project.settings.appAttestEnabled ? 1 : 0), \(bind: project.settings.appAttestTeamId),
                        \(bind: project.settings.appAttestBundleId),
                        \(bind: project.settings.appAttestEnvironment.rawValue),
                        \(bind: try Self.encode(project.settings.passkeys)))
                """
            ).run()
        }
    }

    /// The project `id` and the version of its settings, for ``update(_:ifVersion:)``.
    func projectForUpdate(id: String) async throws -> (Project, version: Int64)? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.projectColumns), settings_version FROM projects WHERE id = \(bind: id)"
            ).first().map { row in (try project(from: row), try row.decode(column: "settings_version", as: Int64.self))
            }
        }
    }

    func project(id: String) async throws -> Project? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.projectColumns) FROM projects WHERE id = \(bind: id)")
                .first().map(project(from:))
        }
    }

    /// The project that the Descope face knows by `descopeProjectId` (``ProjectSettings/descopeProjectId``).
    func project(descopeProjectId: String) async throws -> Project? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.projectColumns) FROM projects
                WHERE descope_project_id = \(bind: descopeProjectId)
                """
            ).first().map(project(from:))
        }
    }

    func projects() async throws -> [Project] {
        try await database.execute { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.projectColumns) FROM projects ORDER BY created_at, id")
                .all().map(project(from:))
        }
    }

    /// Why a project could not be written.
    enum WriteError: Error {
        /// Another project has the Descope project id.
        case descopeProjectIdTaken
    }

    /// Writes the project's name and settings when they are still at `version` (read with
    /// ``projectForUpdate(id:)``); false, and nothing written, when another write came first. Its webhook has its
    /// own updates, so a change made from an older copy of the project never undoes one to the webhook, nor the
    /// reverse. Throws ``WriteError/descopeProjectIdTaken`` and writes nothing when another project has its Descope
    /// project id.
    func update(_ project: Project, ifVersion version: Int64) async throws -> Bool {
        let written = try await changing { sql in
            try await sql.raw(
                """
                UPDATE projects SET name = \(bind: project.name), code_length = \(bind: project.settings.codeLength),
                    code_ttl_seconds = \(bind: project.settings.codeLifetime),
                    allowed_countries = \(bind: Self.encode(project.settings.allowedCountries)),
                    session_ttl_seconds = \(bind: project.settings.sessionLifetime),
                    refresh_ttl_seconds = \(bind: project.settings.refreshLifetime),
                    possession_ttl_seconds = \(bind: project.settings.possessionLifetime),
                    possession_code_ttl_seconds = \(bind: project.settings.possessionCodeLifetime),
                    requires_app_verification = \(bind: project.settings.requiresAppVerification ? 1 : 0),
                    disabled_channels = \(bind: Self.encode(project.settings.disabledChannels)),
                    fallback_channel = \(bind: project.settings.fallbackChannel?.rawValue),
                    unusual_activity_response = \(bind: project.settings.unusualActivityResponse.rawValue),
                    descope_cookies = \(bind: project.settings.descopeCookies ? 1 : 0),
                    descope_project_id = \(bind: project.settings.descopeProjectId),
                    firebase_emulator_admin = \(bind: project.settings.firebaseEmulatorAdmin.rawValue),
                    carrier_check = \(bind: try Self.encode(project.settings.carrierCheck)),
                    carrier_client_secret = \(bind: try sealedCarrierSecret(of: project)),
                    app_attest_enabled = \(bind: project.settings.appAttestEnabled ? 1 : 0),
                    app_attest_team_id = \(bind: project.settings.appAttestTeamId),
                    app_attest_bundle_id = \(bind: project.settings.appAttestBundleId),
                    app_attest_environment = \(bind: project.settings.appAttestEnvironment.rawValue),
                    passkeys = \(bind: try Self.encode(project.settings.passkeys)),
                    settings_version = settings_version + 1
                WHERE id = \(bind: project.id) AND settings_version = \(bind: version) AND NOT EXISTS (
                    SELECT 1 FROM projects other
                    WHERE other.descope_project_id = \(bind: project.settings.descopeProjectId)
                      AND other.id <> \(bind: project.id))
                RETURNING id
                """
            ).first()
        }
        guard written == nil else { return true }
        if let descopeProjectId = project.settings.descopeProjectId,
            let other = try await self.project(descopeProjectId: descopeProjectId), other.id != project.id
        {
            throw WriteError.descopeProjectIdTaken
        }
        return false
    }

    /// Points the project's challenge events at `url` (nil turns them off), leaving the rest of the row as it is.
    func setWebhookURL(_ url: String?, projectId: String) async throws {
        try await changing { sql in
            try await sql.raw("UPDATE projects SET webhook_url = \(bind: url) WHERE id = \(bind: projectId)").run()
        }
    }

    /// Stores a new webhook signing secret, sealed: in place of the current one when `replacing`, otherwise only
    /// when the project has none (two concurrent first webhooks then keep one secret). True when it was stored.
    @discardableResult
    func setWebhookSecret(_ secret: String, projectId: String, replacing: Bool) async throws -> Bool {
        let sealed = try webhookSecrets.sealText(secret, context: projectId)
        return try await changing { sql in
            let onlyIfNone: SQLQueryString = replacing ? "" : "AND webhook_secret IS NULL"
            return try await sql.raw(
                """
                UPDATE projects SET webhook_secret = \(bind: sealed) WHERE id = \(bind: projectId) \(onlyIfNone)
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// The project and id of an unrevoked key, found by the key's hash, from ``Database/apiKeyCache`` where it may be
    /// used: on PostgreSQL while the server hears every change, on SQLite when the key was kept at the `key_epoch`
    /// the request reads first.
    func projectAndKeyId(forKeyHash hash: String) async throws -> (project: Project, keyId: String)? {
        let cache = database.apiKeyCache
        switch database.engine {
        case .postgres:
            if let kept = cache.lookup(hash: hash) { return kept }
            let ticket = cache.ticket()
            let found = try await database.lookupConfirmingMiss { try await project(forKeyHash: hash, in: $0) }
            if let found, let ticket { cache.remember(found, hash: hash, ticket: ticket) }
            return found
        case .sqlite:
            return try await database.lookupConfirmingMiss { sql in
                let epoch = try await sql.raw("SELECT epoch FROM key_epoch").first()?.decode(
                    column: "epoch", as: Int.self)
                if let epoch, let kept = cache.lookup(hash: hash, epoch: epoch) { return kept }
                let found = try await project(forKeyHash: hash, in: sql)
                if let found, let epoch { cache.remember(found, hash: hash, epoch: epoch) }
                return found
            }
        }
    }

    private func project(forKeyHash hash: String, in sql: any SQLDatabase) async throws -> (
        project: Project, keyId: String
    )? {
        try await sql.raw(
            """
            SELECT k.id AS key_id, \(unsafeRaw: Self.joinedColumns)
            FROM api_keys k JOIN projects p ON p.id = k.project_id
            WHERE k.secret_hash = \(bind: hash) AND k.revoked_at IS NULL
            """
        ).first().map { row in
            (project: try project(from: row), keyId: try row.decode(column: "key_id", as: String.self))
        }
    }

    func insertKey(_ key: APIKey, secretHash: String) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO api_keys (id, project_id, secret_hash, prefix, name, created_at)
                VALUES (\(bind: key.id), \(bind: key.projectId), \(bind: secretHash), \(bind: key.prefix),
                        \(bind: key.name), \(bind: key.createdAt.storedValue))
                """
            ).run()
        }
    }

    func keys(projectId: String) async throws -> [APIKey] {
        try await database.execute { sql in
            try await sql.raw(
                """
                SELECT id, project_id, name, prefix, created_at, revoked_at FROM api_keys
                WHERE project_id = \(bind: projectId) ORDER BY created_at, id
                """
            ).all().map { row in
                APIKey(
                    id: try row.decode(column: "id", as: String.self),
                    projectId: try row.decode(column: "project_id", as: String.self),
                    name: try row.decode(column: "name", as: String.self),
                    prefix: try row.decode(column: "prefix", as: String.self),
                    createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"))
            }
        }
    }

    /// Revokes a key of the project; false when the project has no such unrevoked key.
    func revokeKey(id: String, projectId: String, at now: Date) async throws -> Bool {
        try await changing { sql in
            try await sql.raw(
                """
                UPDATE api_keys SET revoked_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND revoked_at IS NULL
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Seals the webhook secrets an older version stored in plain text; run at start-up, so an upgraded database
    /// keeps its secrets and holds none readable. Returns how many it sealed.
    @discardableResult
    func sealPlainWebhookSecrets() async throws -> Int {
        try await changing { sql in
            let plain = try await sql.raw(
                """
                SELECT id, webhook_secret FROM projects
                WHERE webhook_secret IS NOT NULL AND webhook_secret NOT LIKE \(bind: SecretSealer.textPrefix + "%")
                """
            ).all().map { row in
                (
                    try row.decode(column: "id", as: String.self),
                    try row.decode(column: "webhook_secret", as: String.self)
                )
            }
            for (id, secret) in plain {
                // Only if it is still that plain value: another node may be sealing it too.
                try await sql.raw(
                    """
                    UPDATE projects SET webhook_secret = \(bind: try webhookSecrets.sealText(secret, context: id))
                    WHERE id = \(bind: id) AND webhook_secret = \(bind: secret)
                    """
                ).run()
            }
            return plain.count
        }
    }

    /// Runs a write to keys or projects, then forgets this process's cached keys at once; other processes hear of it
    /// through PostgreSQL (migration 21's triggers).
    private func changing<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        defer { database.apiKeyCache.changed() }
        return try await database.execute(body)
    }

    /// The carrier check as stored: its JSON, which leaves the client secret out.
    private static func encode(_ carrierCheck: CarrierCheckSettings) throws -> String? {
        carrierCheck == CarrierCheckSettings()
            ? nil : String(decoding: try JSONEncoder().encode(carrierCheck), as: UTF8.self)
    }

    /// The relying party as stored: its JSON, or nil while passkeys are off.
    private static func encode(_ passkeys: PasskeySettings?) throws -> String? {
        try passkeys.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
    }

    /// The carrier check's client secret, sealed and bound to its project (a context no webhook secret has).
    private func sealedCarrierSecret(of project: Project) throws -> String? {
        try project.settings.carrierCheck.clientSecret.map {
            try webhookSecrets.sealText($0, context: Self.carrierSecretContext(project.id))
        }
    }

    private static func carrierSecretContext(_ projectId: String) -> String { "carrier-client-secret:\(projectId)" }

    private func carrierCheck(from row: any SQLRow, projectId: String) throws -> CarrierCheckSettings {
        var settings = CarrierCheckSettings()
        if let json = try row.decode(column: "carrier_check", as: String?.self) {
            settings = try JSONDecoder().decode(CarrierCheckSettings.self, from: Data(json.utf8))
        }
        settings.clientSecret = try row.decode(column: "carrier_client_secret", as: String?.self).map {
            try webhookSecrets.openText($0, context: Self.carrierSecretContext(projectId))
        }
        return settings
    }

    private static func encode(_ countries: [String]?) -> String? {
        countries?.joined(separator: ",")
    }

    private static func encode(_ channels: [Channel]) -> String {
        channels.map(\.rawValue).joined(separator: ",")
    }

    private func project(from row: any SQLRow) throws -> Project {
        let countries = try row.decode(column: "allowed_countries", as: String?.self)
        let id = try row.decode(column: "id", as: String.self)
        var settings = ProjectSettings(
            codeLength: try row.decode(column: "code_length", as: Int.self),
            codeLifetime: try row.decode(column: "code_ttl_seconds", as: Int.self),
            allowedCountries: countries.map { $0.split(separator: ",").map(String.init) },
            sessionLifetime: try row.decode(column: "session_ttl_seconds", as: Int.self),
            refreshLifetime: try row.decode(column: "refresh_ttl_seconds", as: Int.self),
            possessionLifetime: try row.decode(column: "possession_ttl_seconds", as: Int.self),
            possessionCodeLifetime: try row.decode(column: "possession_code_ttl_seconds", as: Int.self),
            requiresAppVerification: try row.decode(column: "requires_app_verification", as: Int.self) != 0,
            disabledChannels: try row.decode(column: "disabled_channels", as: String.self)
                .split(separator: ",").compactMap { Channel(rawValue: String($0)) },
            fallbackChannel: try row.decode(column: "fallback_channel", as: String?.self)
                .flatMap(Channel.init(rawValue:)),
            unusualActivityResponse: try row.enumeration(
                "unusual_activity_response", as: UnusualActivityResponse.self),
            descopeCookies: try row.decode(column: "descope_cookies", as: Int.self) != 0,
            descopeProjectId: try row.decode(column: "descope_project_id", as: String?.self),
            firebaseEmulatorAdmin: try row.enumeration("firebase_emulator_admin", as: FirebaseEmulatorAdmin.self),
            appAttestEnabled: try row.decode(column: "app_attest_enabled", as: Int.self) != 0,
            appAttestTeamId: try row.decode(column: "app_attest_team_id", as: String?.self),
            appAttestBundleId: try row.decode(column: "app_attest_bundle_id", as: String?.self),
            appAttestEnvironment: try row.enumeration("app_attest_environment", as: AppAttestEnvironment.self))
        settings.carrierCheck = try carrierCheck(from: row, projectId: id)
        settings.passkeys = try row.decode(column: "passkeys", as: String?.self).map {
            try JSONDecoder().decode(PasskeySettings.self, from: Data($0.utf8))
        }
        return Project(
            id: id, name: try row.decode(column: "name", as: String.self), settings: settings,
            createdAt: try row.date("created_at"),
            webhookURL: try row.decode(column: "webhook_url", as: String?.self),
            webhookSecret: try row.decode(column: "webhook_secret", as: String?.self).map {
                try webhookSecrets.openText($0, context: id)
            })
    }
}
