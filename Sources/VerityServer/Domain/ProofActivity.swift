import Foundation

/// What proved a sign-in or a flow, as the console and its report name it.
///
/// A code send that app verification admitted is counted under the app's proof (``silentPush``, ``appAttest``);
/// the code's approval, outside possession flows, under ``code``: a sign-in by code from a verified app counts under
/// both, since it used both. A possession flow counts once, under the method that proved it.
enum SignInProof: String, Sendable, CaseIterable {
    case silentPush = "silent_push"
    case appAttest = "app_attest"
    /// The mobile operator confirmed the number (a possession flow's `silent` method).
    case carrier
    /// A one-time code was approved (a sign-in, step-up or API verification, or a possession flow's `otp`).
    case code
    /// A possession flow's instant link was opened.
    case instantLink = "instant_link"

    /// How the console's table heads the proof.
    var title: String {
        switch self {
        case .silentPush: "Silent push"
        case .appAttest: "App Attest"
        case .carrier: "Carrier"
        case .code: "Code"
        case .instantLink: "Instant link"
        }
    }
}

/// A project's proofs per day over the last ``days`` days, oldest first.
struct ProofActivityReport: Sendable, Equatable {
    /// The first day shown, in days since 1970-01-01 (UTC).
    var firstDay: Int
    var days: Int
    /// Each proof's counts, one per day from ``firstDay``; a proof with none has no entry.
    var counts: [SignInProof: [Int]]

    /// The count of `proof` on the day `index` days after ``firstDay``.
    func count(_ proof: SignInProof, day index: Int) -> Int { counts[proof]?[index] ?? 0 }

    /// The count of `proof` over every day of the report.
    func total(_ proof: SignInProof) -> Int { counts[proof]?.reduce(0, +) ?? 0 }
}

/// The report of which proof each sign-in or flow of a project used, per day, for the console.
struct ProofActivityService: Sendable {
    private let store: ProofActivityStore
    let clock: any TimeSource

    init(store: ProofActivityStore, clock: any TimeSource) {
        self.store = store
        self.clock = clock
    }

    /// The last `days` days (today included) of `project`'s proofs (every project's when nil), counted in one
    /// grouped read.
    func report(days: Int = VerificationService.activityDays, in project: Project?) async throws
        -> ProofActivityReport
    {
        let today = Int((clock.now().timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        var counts: [SignInProof: [Int]] = [:]
        for row in try await store.counts(
            projectId: project?.id, from: Date(timeIntervalSince1970: Double(firstDay) * 86_400),
            to: Date(timeIntervalSince1970: Double(today + 1) * 86_400))
        {
            guard let proof = SignInProof(rawValue: row.proof), (0..<days).contains(row.day - firstDay) else {
                continue
            }
            counts[proof, default: Array(repeating: 0, count: days)][row.day - firstDay] += row.count
        }
        return ProofActivityReport(firstDay: firstDay, days: days, counts: counts)
    }
}
