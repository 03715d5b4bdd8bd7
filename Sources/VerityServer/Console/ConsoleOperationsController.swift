import Foundation
import Hummingbird
import VerityCore

/// The console's operations pages: the dashboard (codes started, approved and failed per channel and country,
/// conversion, delivery latency, outbox depth, limits hit, as server-drawn SVG charts), the verifications list and
/// the outbox messages, with a dead message sent once more on request.
struct ConsoleOperationsController: Sendable {
    let console: ConsoleController
    let verifications: VerificationService
    let outbox: OutboxService
    let proofs: ProofActivityService

    /// Days the dashboard covers.
    static let days = VerificationService.activityDays

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("", use: console.page { _, session in try await dashboard(session) })
        group.get("verifications", use: console.page(verificationList))
        group.get("messages", use: console.page(messageList))
        group.post("messages/:message/retry", use: console.action(retry))
    }

    // MARK: - Dashboard

    private func dashboard(_ session: ConsoleSession) async throws -> Response {
        async let report = verifications.activity(days: Self.days)
        async let latency = outbox.latency(hours: 24)
        async let depth = outbox.depth()
        async let proven = proofs.report(days: Self.days, in: nil)
        let activity = try await report
        var total = VerificationActivityReport.Counts()
        for day in 0..<activity.days {
            let counts = activity.total(day: day)
            total.started += counts.started
            total.approved += counts.approved
            total.failed += counts.failed
            total.limitsHit += counts.limitsHit
        }
        let delivered = try await latency
        let cards = """
            <div class="cards">
            <div class="card" id="card-started"><strong>\(total.started)</strong>verifications started</div>
            <div class="card" id="card-approved"><strong>\(total.approved)</strong>approved</div>
            <div class="card" id="card-failed"><strong>\(total.failed)</strong>failed</div>
            <div class="card" id="card-conversion"><strong>\(Self.percent(total.conversion))</strong>conversion</div>
            <div class="card" id="card-limits"><strong>\(total.limitsHit)</strong>attempt limits hit</div>
            <div class="card" id="card-latency"><strong>\(String(format: "%.2f s", delivered.averageSeconds))</strong>mean delivery \
            latency, last 24 h (slowest \(String(format: "%.1f s", delivered.maximumSeconds)), \(delivered.sent) sent)</div>
            <div class="card" id="card-outbox"><strong>\(try await depth)</strong>messages waiting in the outbox</div>
            </div>
            """
        let channelRows = Channel.allCases.compactMap { channel -> [String]? in
            guard let days = activity.byChannel[channel] else { return nil }
            var counts = VerificationActivityReport.Counts()
            for day in days {
                counts.started += day.started
                counts.approved += day.approved
                counts.failed += day.failed
                counts.limitsHit += day.limitsHit
            }
            return Self.countCells(channel.rawValue, counts)
        }
        let countryRows = activity.byCountry.prefix(20).map { Self.countCells($0.region, $0.counts) }
        let headers = ["", "Started", "Approved", "Failed", "Conversion", "Limits hit"]
        let proofReport = try await proven
        let proofRows = SignInProof.allCases.map { [ConsoleHTML.escape($0.title), "\(proofReport.total($0))"] }
        let body = """
            <p>The last \(Self.days) days, every project (UTC days).</p>
            \(cards)
            <h2>Verifications per day</h2>
            \(ConsoleChart.bars(activity))
            \(ConsoleHTML.table(caption: "Per channel", headers: headers, rows: channelRows, empty: "No verifications yet."))
            \(ConsoleHTML.table(caption: "Per country (phone channels)", headers: headers, rows: countryRows, empty: "No phone verifications yet."))
            <h2>Proofs</h2>
            \(ConsoleHTML.table(caption: "What proved sign-ins and flows (each project's Proofs page has them per day)", headers: ["Proof", "Count"], rows: proofRows))
            """
        return ConsoleHTML.page("Dashboard", body, session: session)
    }

    private static func countCells(_ name: String, _ counts: VerificationActivityReport.Counts) -> [String] {
        [
            ConsoleHTML.escape(name), "\(counts.started)", "\(counts.approved)", "\(counts.failed)",
            percent(counts.conversion), "\(counts.limitsHit)",
        ]
    }

    static func percent(_ fraction: Double) -> String {
        String(format: "%.0f%%", fraction * 100)
    }

    // MARK: - Verifications

    @Sendable private func verificationList(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let query = ConsoleForm.query(of: request)
        let page = try await verifications.recent(
            projectId: query["project"], search: query["q"], cursor: query["cursor"])
        let now = verifications.clock.now()
        let rows = page.items.map { record in
            [
                "<code>\(record.id)</code>", "<code>\(record.projectId)</code>", record.channel.rawValue,
                ConsoleHTML.escape((try? Destination(record.destination, channel: record.channel).masked) ?? "***"),
                record.status(at: now).rawValue, "\(record.sendAttempts)", "\(record.checkAttempts)",
                ConsoleHTML.date(record.createdAt),
            ]
        }
        let project =
            query["project"].map { #"<input type="hidden" name="project" value="\#(ConsoleHTML.escape($0))">"# } ?? ""
        return ConsoleHTML.page(
            "Verifications",
            ConsoleHTML.search(
                action: "/console/verifications", label: "Phone number, email address or verification id",
                value: query["q"], extra: project)
                + ConsoleHTML.table(
                    caption: "Verifications, newest first (destinations masked)",
                    headers: ["Id", "Project", "Channel", "To", "Status", "Sends", "Checks", "Created (UTC)"],
                    rows: rows, empty: "No verification found.")
                + ConsoleHTML.nextPage(
                    "/console/verifications", cursor: page.nextCursor,
                    query: ["q": query["q"], "project": query["project"]]),
            session: session)
    }

    // MARK: - Messages

    @Sendable private func messageList(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let query = ConsoleForm.query(of: request)
        let status = query["status"].flatMap(OutboxMessage.Status.init(rawValue:))
        let page = try await outbox.messages(status: status, search: query["q"], cursor: query["cursor"])
        let rows = page.items.map { message in
            [
                "<code>\(message.id)</code>", message.channel.rawValue,
                ConsoleHTML.escape(ConsoleHTML.masked(message.destination, channel: message.channel)),
                message.status.rawValue, "\(message.attempts)", ConsoleHTML.escape(message.lastError ?? ""),
                ConsoleHTML.date(message.createdAt), ConsoleHTML.date(message.sentAt),
                message.status == .dead
                    ? ConsoleHTML.button(
                        "Retry \(message.id)", action: "/console/messages/\(message.id)/retry", session: session)
                    : "",
            ]
        }
        let statusSelect = ConsoleHTML.statusSelect(["pending", "sent", "dead"], selected: status?.rawValue)
        return ConsoleHTML.page(
            "Messages",
            ConsoleHTML.search(
                action: "/console/messages", label: "Destination (phone number or email address)",
                value: query["q"], extra: statusSelect)
                + ConsoleHTML.table(
                    caption: "Outbox messages, newest first (destinations masked)",
                    headers: [
                        "Id", "Channel", "To", "Status", "Attempts", "Last error", "Queued (UTC)", "Sent (UTC)", "",
                    ],
                    rows: rows, empty: "No message found.")
                + ConsoleHTML.nextPage(
                    "/console/messages", cursor: page.nextCursor,
                    query: ["q": query["q"], "status": status?.rawValue]),
            session: session)
    }

    private func retry(_ request: Request, _ session: ConsoleSession, _ form: ConsoleForm) async throws -> Response {
        let segments = request.uri.path.split(separator: "/")
        let id = segments.count > 2 ? String(segments[2]) : ""
        let message = try await outbox.retry(id: id)
        try await console.operators.audit(session.record, "message.retry", target: message.id)
        return ConsoleHTML.redirect("/console/messages?q=\(PercentEncoding.encode(message.destination))")
    }
}
