import Foundation
import Hummingbird
import VerityCore

/// The console's project pages: projects and their settings, API keys (a new secret shown once), roles, test
/// numbers, and users (search, factors, security events, disable, revoke sessions). Every change is a Domain call,
/// written to the audit trail.
struct ConsoleProjectsController: Sendable {
    let console: ConsoleController
    let admin: AdminService
    let users: UserService
    let accounts: UserAccounts
    let sessions: SessionService
    let roles: RoleService
    let testNumbers: TestNumberService
    let factors: FactorService

    private var operators: OperatorService { console.operators }

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("projects", use: console.page { _, session in try await projectList(session) })
        group.post("projects", use: console.action(createProject))
        group.get(
            "projects/:project",
            use: console.page { request, session in
                try await projectPage(try await admin.project(of: request), session: session)
            })
        group.post("projects/:project/settings", use: console.action(updateSettings))
        group.post("projects/:project/webhook", use: console.action(setWebhook))
        group.post("projects/:project/keys", use: console.action(createKey))
        group.post("projects/:project/keys/:key/revoke", use: console.action(revokeKey))
        group.post("projects/:project/roles", use: console.action(createRole))
        group.post("projects/:project/test-numbers", use: console.action(addTestNumber))
        group.get("projects/:project/users", use: console.page(userList))
        group.get("projects/:project/users/:user", use: console.page(userPage))
        group.post("projects/:project/users/:user/revoke-sessions", use: console.action(revokeSessions))
        group.post(
            "projects/:project/users/:user/disable",
            use: console.action { request, session, _ in
                try await setDisabled(true, request, session)
            })
        group.post(
            "projects/:project/users/:user/enable",
            use: console.action { request, session, _ in
                try await setDisabled(false, request, session)
            })
    }

    fileprivate static func parameter(_ name: String, of request: Request) throws -> String {
        let segments = request.uri.path.split(separator: "/").map(String.init)
        let names = ["project": 2, "key": 4, "user": 4]
        guard let index = names[name], segments.count > index else {
            throw VerityError(.notFound, "There is no such page.")
        }
        return segments[index].removingPercentEncoding ?? segments[index]
    }

    private static func path(_ project: Project, _ tail: String = "") -> String {
        "/console/projects/\(PercentEncoding.encode(project.id))\(tail)"
    }

    // MARK: - Projects

    private func projectList(_ session: ConsoleSession, notice: String = "") async throws -> Response {
        let rows = try await admin.listProjects().map { project in
            [
                #"<a href="\#(Self.path(project))">\#(ConsoleHTML.escape(project.name))</a>"#,
                "<code>\(project.id)</code>", ConsoleHTML.date(project.createdAt),
            ]
        }
        return ConsoleHTML.page(
            "Projects",
            notice
                + ConsoleHTML.table(
                    caption: "Projects on this server", headers: ["Name", "Id", "Created (UTC)"], rows: rows)
                    + """
                    <h2>New project</h2>
                    <form method="post" action="/console/projects">\(ConsoleHTML.csrfField(session))
                    \(ConsoleHTML.field("Project name", name: "name", required: true, extra: #"maxlength="100""#))
                    <p><button type="submit">Create project</button></p></form>
                    """,
            session: session)
    }

    private func createProject(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let (project, key) = try await admin.createProject(name: form["name"] ?? "")
        try await operators.audit(session.record, "project.create", target: project.id)
        try await operators.audit(session.record, "api_key.create", target: key.key.id)
        return try await projectPage(project, session: session, secret: key)
    }

    private func projectPage(_ project: Project, session: ConsoleSession, secret: AdminService.CreatedKey? = nil)
        async throws -> Response
    {
        let settings = project.settings
        async let keys = admin.listKeys(projectId: project.id)
        async let roleList = roles.list(in: project)
        async let numbers = testNumbers.list(in: project)
        let shownOnce =
            secret.map { created in
                """
                <div class="notice" role="status"><p>New API key <strong>\(ConsoleHTML.escape(created.key.name))</strong>. \
                Copy it now: it is shown only this once.</p>
                <p class="secret" id="new-secret">\(ConsoleHTML.escape(created.secret))</p></div>
                """
            } ?? ""
        let keyRows = try await keys.map { key in
            [
                ConsoleHTML.escape(key.name), "<code>\(ConsoleHTML.escape(key.prefix))…</code>",
                "<code>\(key.id)</code>", ConsoleHTML.date(key.createdAt),
                key.revokedAt.map { "revoked " + ConsoleHTML.date($0) }
                    ?? ConsoleHTML.button(
                        "Revoke \(key.name)", action: Self.path(project, "/keys/\(key.id)/revoke"), session: session,
                        danger: true),
            ]
        }
        let roleRows = try await roleList.map { role in
            [
                ConsoleHTML.escape(role.name), ConsoleHTML.escape(role.description ?? ""),
                ConsoleHTML.escape(role.permissions.joined(separator: ", ")),
            ]
        }
        let numberRows = try await numbers.map { number in
            [ConsoleHTML.escape(number.phoneNumber), ConsoleHTML.date(number.createdAt)]
        }
        let channels = Channel.allCases.map(\.rawValue).joined(separator: ", ")
        let body = """
            \(shownOnce)
            <p>Id <code>\(project.id)</code> · created \(ConsoleHTML.date(project.createdAt)) · \
            <a href="\(Self.path(project, "/users"))">Users</a> · \
            <a href="\(Self.path(project, "/security-events"))">Security events</a> · \
            <a href="\(Self.path(project, "/twilio"))">Twilio services</a> · \
            <a href="\(Self.path(project, "/challenges"))">Push challenges</a> · \
            <a href="\(Self.path(project, "/possession"))">Possession flows</a> · \
            <a href="\(Self.path(project, "/proofs"))">Proofs</a> · \
            <a href="/console/verifications?project=\(PercentEncoding.encode(project.id))">Verifications</a></p>
            <h2>Settings</h2>
            <form method="post" action="\(Self.path(project, "/settings"))">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("Name", name: "name", value: project.name, required: true))
            \(ConsoleHTML.field("Code length (digits)", name: "codeLength", value: "\(settings.codeLength)", type: "number", hint: "4 to 10", extra: #"min="4" max="10""#))
            \(ConsoleHTML.field("Code lifetime (seconds)", name: "codeLifetime", value: "\(settings.codeLifetime)", type: "number", hint: "60 to 86400", extra: #"min="60" max="86400""#))
            \(ConsoleHTML.field("Allowed countries for SMS", name: "allowedCountries", value: settings.allowedCountries?.joined(separator: ",") ?? "all", hint: "ISO region codes separated by commas, such as US,CA,GB; all for every region"))
            \(ConsoleHTML.field("Channels turned off", name: "disabledChannels", value: settings.disabledChannels.map(\.rawValue).joined(separator: ","), hint: "Any of \(channels), separated by commas; none (or empty) turns every channel on"))
            \(ConsoleHTML.select("Fallback channel", name: "fallbackChannel", options: ["none"] + Channel.allCases.filter(\.reachesPhone).map(\.rawValue), selected: settings.fallbackChannel?.rawValue ?? "none", hint: "The phone channel a code goes by once more when delivery by another phone channel fails for good"))
            \(ConsoleHTML.select("App verification", name: "requiresAppVerification", options: ["optional", "required"], selected: settings.requiresAppVerification ? "required" : "optional", hint: "Required: sign-in, step-up and possession codes go only to requests that prove they come from the project's app"))
            \(ConsoleHTML.select("App Attest", name: "appAttest", options: ["off", "on"], selected: settings.appAttestEnabled ? "on" : "off", hint: "On: an App Attest assertion of the app below also proves it, wherever app verification asks for a proof"))
            \(ConsoleHTML.field("App Attest team id", name: "appAttestTeamId", value: settings.appAttestTeamId ?? "", hint: "The Apple developer team id of the app, ten letters and digits; none (or empty) for none"))
            \(ConsoleHTML.field("App Attest bundle id", name: "appAttestBundleId", value: settings.appAttestBundleId ?? "", hint: "The app's bundle id, such as com.example.app; none (or empty) for none"))
            \(ConsoleHTML.select("App Attest environment", name: "appAttestEnvironment", options: AppAttestEnvironment.allCases.map(\.rawValue), selected: settings.appAttestEnvironment.rawValue, hint: "The app's appattest-environment entitlement: development (Xcode builds) or production (TestFlight, App Store)"))
            \(ConsoleHTML.select("Response to unusual activity", name: "unusualActivityResponse", options: UnusualActivityResponse.allCases.map(\.rawValue), selected: settings.unusualActivityResponse.rawValue, hint: "What a device's \u{201C}this wasn't me\u{201D} does besides the security event and the webhook"))
            \(ConsoleHTML.select("Descope cookies", name: "descopeCookies", options: ["off", "on"], selected: settings.descopeCookies ? "on" : "off", hint: "On: the Descope face also delivers its tokens as DS/DSR cookies"))
            \(ConsoleHTML.field("Descope project id", name: "descopeProjectId", value: settings.descopeProjectId ?? "", hint: "A project id the Descope face also answers to, such as the app's Descope project id (P2…); none (or empty) for none. Changing it signs Descope users out."))
            \(ConsoleHTML.select("Firebase emulator admin", name: "firebaseEmulatorAdmin", options: FirebaseEmulatorAdmin.allCases.map(\.rawValue), selected: settings.firebaseEmulatorAdmin.rawValue, hint: "Development only: the Firebase face serves firebase-admin's Bearer owner and the pending codes (test_numbers: of test numbers only; all_numbers: live codes of every number) to loopback clients, while the server's VERITY_FIREBASE_EMULATOR_ADMIN is on"))
            <p><button type="submit">Save settings</button></p></form>
            <h2>Webhook</h2>
            <form method="post" action="\(Self.path(project, "/webhook"))">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("Challenge events URL", name: "url", value: project.webhookURL ?? "", type: "url", hint: "Empty turns events off. The signing secret is made once and never shown here."))
            <p><button type="submit">Save webhook</button></p></form>
            <h2>API keys</h2>
            \(ConsoleHTML.table(caption: "API keys", headers: ["Name", "Starts with", "Id", "Created (UTC)", "State"], rows: keyRows))
            <form method="post" action="\(Self.path(project, "/keys"))">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("New key's name", name: "name", required: true, extra: #"maxlength="100""#, form: "key-"))
            <p><button type="submit">Create API key</button></p></form>
            <h2>Roles</h2>
            \(ConsoleHTML.table(caption: "Roles", headers: ["Name", "Description", "Permissions"], rows: roleRows))
            <form method="post" action="\(Self.path(project, "/roles"))">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("Role name", name: "name", required: true, form: "role-"))
            \(ConsoleHTML.field("Permissions", name: "permissions", hint: "Separated by commas"))
            <p><button type="submit">Create role</button></p></form>
            <h2>Test numbers</h2>
            \(ConsoleHTML.table(caption: "Test phone numbers (their fixed codes are not shown)", headers: ["Number", "Added (UTC)"], rows: numberRows))
            <form method="post" action="\(Self.path(project, "/test-numbers"))">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("Test number", name: "phoneNumber", type: "tel", required: true, hint: "E.164, such as +15555550100"))
            \(ConsoleHTML.field("Fixed code", name: "code", required: true, extra: #"inputmode="numeric" autocomplete="off""#))
            <p><button type="submit">Add test number</button></p></form>
            """
        return ConsoleHTML.page("Project \(project.name)", body, session: session)
    }

    private func updateSettings(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        var text: [ProjectSettingsChange.Setting: String] = [:]
        for setting in ProjectSettingsChange.Setting.allCases {
            text[setting] = form.present(setting.rawValue)
        }
        let change = try ProjectSettingsChange(text)
        _ = try await admin.updateProject(id: project.id, name: form["name"], settings: change.apply(to:))
        try await operators.audit(session.record, "project.update", target: project.id)
        return ConsoleHTML.redirect(Self.path(project))
    }

    private func setWebhook(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        _ = try await admin.setWebhook(projectId: project.id, url: form["url"])
        try await operators.audit(session.record, "project.webhook", target: project.id)
        return ConsoleHTML.redirect(Self.path(project))
    }

    private func createKey(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        let created = try await admin.createKey(projectId: project.id, name: form["name"] ?? "")
        try await operators.audit(session.record, "api_key.create", target: created.key.id)
        return try await projectPage(project, session: session, secret: created)
    }

    private func revokeKey(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        let keyId = try Self.parameter("key", of: request)
        try await admin.revokeKey(id: keyId, projectId: project.id)
        try await operators.audit(session.record, "api_key.revoke", target: keyId)
        return ConsoleHTML.redirect(Self.path(project))
    }

    private func createRole(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        let permissions = form["permissions"].map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let role = try await roles.create(
            CreateRoleRequest(name: form["name"] ?? "", permissions: permissions), in: project)
        try await operators.audit(session.record, "role.create", target: "\(project.id) \(role.name)")
        return ConsoleHTML.redirect(Self.path(project))
    }

    private func addTestNumber(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        let number = try await testNumbers.add(
            CreateTestPhoneNumberRequest(phoneNumber: form["phoneNumber"] ?? "", code: form["code"] ?? ""),
            in: project)
        try await operators.audit(session.record, "test_number.add", target: "\(project.id) \(number.phoneNumber)")
        return ConsoleHTML.redirect(Self.path(project))
    }

    // MARK: - Users

    @Sendable private func userList(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let query = ConsoleForm.query(of: request)
        let page = try await users.list(loginId: query["q"], cursor: query["cursor"], in: project)
        let rows = page.items.map { user in
            [
                #"<a href="\#(Self.path(project, "/users/" + PercentEncoding.encode(user.id)))">\#(ConsoleHTML.escape(user.loginIds.joined(separator: ", ")))</a>"#,
                ConsoleHTML.escape(user.displayName ?? ""), ConsoleHTML.escape(user.roles.joined(separator: ", ")),
                user.disabled ? "disabled" : "active", ConsoleHTML.date(user.createdAt),
            ]
        }
        return ConsoleHTML.page(
            "Users of \(project.name)",
            ConsoleHTML.search(
                action: Self.path(project, "/users"), label: "Login id (phone or email)", value: query["q"])
                + ConsoleHTML.table(
                    caption: "Users, newest first", headers: ["Login ids", "Name", "Roles", "State", "Created (UTC)"],
                    rows: rows, empty: "No user found.")
                + ConsoleHTML.nextPage(Self.path(project, "/users"), cursor: page.nextCursor, query: [:]),
            session: session)
    }

    @Sendable private func userPage(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let user = try await users.user(id: try Self.parameter("user", of: request), in: project)
        async let factorPage = factors.factors(userId: user.id, in: project)
        async let events = sessions.securityEvents(userId: user.id, limit: 50, in: project)
        async let active = sessions.activeSessions(userId: user.id, in: project)
        let base = Self.path(project, "/users/" + PercentEncoding.encode(user.id))
        let factorRows = try await factorPage.items.map { factor in
            [
                factor.type == .push
                    ? #"<a href="\#(Self.path(project, "/challenges?q=" + PercentEncoding.encode(factor.id)))">\#(factor.id)</a>"#
                    : "<code>\(factor.id)</code>",
                factor.type.rawValue, factor.status.rawValue,
                ConsoleHTML.escape(factor.friendlyName), ConsoleHTML.date(factor.createdAt),
            ]
        }
        let sessionRows = try await active.map { listed in
            [
                "<code>\(ConsoleHTML.escape(listed.session.id))</code>", ConsoleHTML.date(listed.session.createdAt),
                ConsoleHTML.date(listed.refreshedAt), ConsoleHTML.date(listed.session.expiresAt),
                ConsoleHTML.escape(listed.session.amr.joined(separator: ", ")),
            ]
        }
        let eventRows = try await events.items.map { event in
            [
                ConsoleHTML.date(event.createdAt), ConsoleHTML.escape(event.type),
                ConsoleHTML.escape(event.sessionId ?? ""), ConsoleHTML.escape(event.ipAddress ?? ""),
            ]
        }
        let body = """
            <p>Id <code>\(user.id)</code> · \(user.disabled ? "<strong>disabled</strong>" : "active") · created \
            \(ConsoleHTML.date(user.createdAt)) · last sign-in \(ConsoleHTML.date(user.lastSignInAt))</p>
            <p>Login ids: \(ConsoleHTML.escape(user.loginIds.joined(separator: ", "))) · roles: \
            \(ConsoleHTML.escape(user.roles.joined(separator: ", ")))</p>
            <p>\(ConsoleHTML.button("Revoke all sessions", action: base + "/revoke-sessions", session: session, danger: true)) \
            \(user.disabled ? ConsoleHTML.button("Enable user", action: base + "/enable", session: session) : ConsoleHTML.button("Disable user", action: base + "/disable", session: session, danger: true))</p>
            <h2>Factors</h2>
            \(ConsoleHTML.table(caption: "Push and TOTP factors", headers: ["Id", "Type", "Status", "Name", "Created (UTC)"], rows: factorRows))
            <h2>Sessions</h2>
            \(ConsoleHTML.table(caption: "Active sessions, newest first", headers: ["Id", "Created (UTC)", "Last refreshed (UTC)", "Expires (UTC)", "Signed in with (amr)"], rows: sessionRows, empty: "No active session."))
            <h2>Security events</h2>
            \(ConsoleHTML.table(caption: "Sessions and refresh tokens, newest first", headers: ["When (UTC)", "Event", "Session", "Client"], rows: eventRows))
            """
        return ConsoleHTML.page("User \(user.loginIds.first ?? user.id)", body, session: session)
    }

    private func revokeSessions(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws
        -> Response
    {
        let project = try await admin.project(of: request)
        let user = try await users.user(id: try Self.parameter("user", of: request), in: project)
        try await sessions.revokeAll(userId: user.id, in: project)
        try await operators.audit(session.record, "user.revoke_sessions", target: user.id)
        return ConsoleHTML.redirect(Self.path(project, "/users/" + PercentEncoding.encode(user.id)))
    }

    private func setDisabled(_ disabled: Bool, _ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let user = try await accounts.setDisabled(disabled, id: try Self.parameter("user", of: request), in: project)
        try await operators.audit(session.record, disabled ? "user.disable" : "user.enable", target: user.id)
        return ConsoleHTML.redirect(Self.path(project, "/users/" + PercentEncoding.encode(user.id)))
    }
}

extension AdminService {
    /// The project a `/console/projects/{project}/…` page names, or `not_found`.
    func project(of request: Request) async throws -> Project {
        let id = try ConsoleProjectsController.parameter("project", of: request)
        guard let project = try await findProject(id: id) else {
            throw VerityError(.notFound, "There is no project \(id).")
        }
        return project
    }
}
