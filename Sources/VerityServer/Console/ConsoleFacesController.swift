import Foundation
import Hummingbird
import VerityCore

/// The console's read-only pages about what a project's faces and sessions did: the Twilio face's services and their
/// webhooks, and the project's security events.
struct ConsoleFacesController: Sendable {
    let console: ConsoleController
    let admin: AdminService
    let sessions: SessionService
    let twilioServices: TwilioServiceService
    let twilioPush: TwilioPush

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("projects/:project/twilio", use: console.page(twilio))
        group.get("projects/:project/security-events", use: console.page(securityEvents))
    }

    @Sendable private func twilio(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let query = ConsoleForm.query(of: request)
        let limit = 20
        let services = try await twilioServices.list(after: query["cursor"], limit: limit + 1, in: project)
        var body = ""
        for service in services.prefix(limit) {
            let hooks = try await twilioPush.webhooks(of: service, after: nil, limit: 50)
            let rows = hooks.map { hook in
                [
                    "<code>\(hook.sid)</code>", ConsoleHTML.escape(hook.friendlyName),
                    ConsoleHTML.escape(hook.eventTypes.joined(separator: ", ")), ConsoleHTML.escape(hook.url),
                    hook.enabled ? "enabled" : "disabled",
                ]
            }
            body += """
                <h2>\(ConsoleHTML.escape(service.friendlyName.isEmpty ? service.sid : service.friendlyName))</h2>
                <p><code>\(service.sid)</code> · codes of \(service.codeLength) digits · TOTP step \
                \(service.totp.timeStep) s · created \(ConsoleHTML.date(service.createdAt))</p>
                \(ConsoleHTML.table(caption: "Webhooks of \(service.sid)", headers: ["Sid", "Name", "Events", "URL", "State"], rows: rows, empty: "No webhook."))
                """
        }
        if services.isEmpty { body = #"<p class="empty">This project has no Twilio Verify service.</p>"# }
        let next = services.count > limit ? services[limit - 1].sid : nil
        return ConsoleHTML.page(
            "Twilio services of \(project.name)",
            body + ConsoleHTML.nextPage("/console/projects/\(project.id)/twilio", cursor: next, query: [:]),
            session: session)
    }

    @Sendable private func securityEvents(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let events = try await sessions.securityEvents(userId: nil, limit: 100, in: project)
        let rows = events.items.map { event in
            [
                ConsoleHTML.date(event.createdAt), ConsoleHTML.escape(event.type),
                #"<a href="/console/projects/\#(project.id)/users/\#(PercentEncoding.encode(event.userId))">\#(ConsoleHTML.escape(event.userId))</a>"#,
                ConsoleHTML.escape(event.sessionId ?? ""), ConsoleHTML.escape(event.ipAddress ?? ""),
            ]
        }
        return ConsoleHTML.page(
            "Security events of \(project.name)",
            ConsoleHTML.table(
                caption: "The latest 100 sign-ins, refreshes, revocations and reuses",
                headers: ["When (UTC)", "Event", "User", "Session", "Client"], rows: rows, empty: "No event yet."),
            session: session)
    }
}
