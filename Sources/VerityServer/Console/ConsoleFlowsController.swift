import Foundation
import Hummingbird
import VerityCore

/// The console's read-only pages about a project's push challenges (filtered by status or factor) and its
/// possession flows, both newest first and paged by cursor, phone numbers masked as in the logs; and which proof
/// its sign-ins and flows used, per day.
struct ConsoleFlowsController: Sendable {
    let console: ConsoleController
    let admin: AdminService
    let challenges: ChallengeService
    let possession: PossessionService
    let proofs: ProofActivityService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("projects/:project/challenges", use: console.page(challengeList))
        group.get("projects/:project/possession", use: console.page(possessionList))
        group.get("projects/:project/proofs", use: console.page(proofTable))
    }

    private static func path(_ project: Project, _ tail: String) -> String {
        "/console/projects/\(PercentEncoding.encode(project.id))\(tail)"
    }

    /// The challenge statuses an operator can filter by.
    static let statuses = ["pending", "approved", "denied", "expired"]

    @Sendable private func challengeList(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let query = ConsoleForm.query(of: request)
        let status = try query["status"].flatMap { value -> ChallengeStatus? in
            if value.isEmpty { return nil }
            guard let status = ChallengeStatus(rawValue: value) else {
                throw VerityError(.invalidRequest, "'\(value)' is not a challenge status.")
            }
            return status
        }
        let factor = query["q"].flatMap { $0.isEmpty ? nil : $0 }
        let page = try await challenges.recent(status: status, factorId: factor, cursor: query["cursor"], in: project)
        let now = challenges.clock.now()
        let rows = page.items.map { challenge in
            let user = Self.path(project, "/users/" + PercentEncoding.encode(challenge.userId))
            let factorId = challenge.respondedFactorId ?? challenge.factorId
            return [
                "<code>\(ConsoleHTML.escape(challenge.id))</code>",
                factorId.map { "<code>\(ConsoleHTML.escape($0))</code>" } ?? "any of the user's",
                #"<a href="\#(user)">\#(ConsoleHTML.escape(challenge.userId))</a>"#,
                challenge.status(at: now).rawValue, challenge.userVerification.rawValue,
                ConsoleHTML.escape(challenge.answerKeyType?.rawValue ?? ""),
                ConsoleHTML.date(challenge.createdAt), ConsoleHTML.date(challenge.respondedAt),
            ]
        }
        let statusSelect = ConsoleHTML.statusSelect(Self.statuses, selected: status?.rawValue)
        return ConsoleHTML.page(
            "Push challenges of \(project.name)",
            ConsoleHTML.search(
                action: Self.path(project, "/challenges"), label: "Factor id", value: factor,
                extra: statusSelect)
                + ConsoleHTML.table(
                    caption: "Push challenges, newest first",
                    headers: [
                        "Id", "Factor", "User", "Status", "User verification", "Answer key", "Created (UTC)",
                        "Answered (UTC)",
                    ],
                    rows: rows, empty: "No push challenge found.")
                + ConsoleHTML.nextPage(
                    Self.path(project, "/challenges"), cursor: page.nextCursor,
                    query: ["status": status?.rawValue, "q": factor]),
            session: session)
    }

    @Sendable private func possessionList(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let query = ConsoleForm.query(of: request)
        let page = try await possession.recent(cursor: query["cursor"], in: project)
        let rows = page.items.map { flow in
            [
                "<code>\(ConsoleHTML.escape(flow.id))</code>", flow.flow.rawValue,
                ConsoleHTML.escape(flow.phone.map { ConsoleHTML.masked($0, channel: .sms) } ?? ""),
                flow.status.rawValue, ConsoleHTML.escape(flow.method?.rawValue ?? ""),
                "\(flow.resends)", "\(flow.retries)", ConsoleHTML.date(flow.createdAt),
            ]
        }
        return ConsoleHTML.page(
            "Possession flows of \(project.name)",
            ConsoleHTML.table(
                caption: "Possession flows, newest first (phone numbers masked)",
                headers: ["Id", "Flow", "Phone", "State", "Channel", "Resends", "Retries", "Created (UTC)"],
                rows: rows, empty: "No possession flow yet.")
                + ConsoleHTML.nextPage(Self.path(project, "/possession"), cursor: page.nextCursor, query: [:]),
            session: session)
    }

    /// One row per day of the last fortnight, newest first, one column per proof.
    @Sendable private func proofTable(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let project = try await admin.project(of: request)
        let report = try await proofs.report(in: project)
        let rows = (0..<report.days).reversed().map { index in
            let day = Date(timeIntervalSince1970: Double(report.firstDay + index) * 86_400)
            return [day.formatted(.iso8601.year().month().day().dateSeparator(.dash))]
                + SignInProof.allCases.map { "\(report.count($0, day: index))" }
        }
        return ConsoleHTML.page(
            "Proofs of \(project.name)",
            """
            <p>What proved each sign-in or flow, per day (UTC) of its start: the app's proof that admitted a code's send \
            (silent push, App Attest), an approved code, and the method of each proven possession flow (carrier, code, \
            instant link). A sign-in by code from a verified app counts under both of its proofs.</p>
            """
                + ConsoleHTML.table(
                    caption: "Proofs per day, newest first",
                    headers: ["Day"] + SignInProof.allCases.map(\.title), rows: rows),
            session: session)
    }
}
