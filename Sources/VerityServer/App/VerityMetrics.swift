import Prometheus
import VerityCore

/// The server's Prometheus metrics, on a registry the application owns (no global metrics system).
public final class VerityMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let outboxDepth: Gauge
    private let keyChangesHeard: Gauge

    private static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5),
    ]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        outboxDepth = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "verity", metricName: "outbox_pending", unitName: "messages",
                helpText: "Messages waiting in the outbox to be sent."))
        keyChangesHeard = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "verity", metricName: "api_key_changes_heard", unitName: "",
                helpText:
                    "1 while this node hears PostgreSQL's notifications of API-key changes and so keeps keys in memory; "
                    + "0 otherwise (always on SQLite, where a request checks the key's change count instead)."))
        // The Prometheus convention for what is running: a gauge of 1 whose labels say it.
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "verity", metricName: "build_info", unitName: "",
                helpText: "Always 1; its version label is the running release of Verity."),
            labels: [("version", VerityRelease.version)]
        ).set(to: 1.0)
        // Create the verification counters up front so a scrape shows them at zero.
        for channel in Channel.allCases {
            for event in ["started", "approved", "failed"] {
                verificationCounter(event, channel: channel).increment(by: Int64(0))
            }
        }
        for type in FactorType.allCases {
            for status in [ChallengeStatus.pending, .approved, .denied, .expired] {
                challengeCounter(status, type: type).increment(by: Int64(0))
            }
        }
        for event in SessionEvent.allCases {
            sessionCounter(event).increment(by: Int64(0))
        }
        for event in PossessionEvent.allCases {
            possessionCounter(event).increment(by: Int64(0))
        }
    }

    /// What happened to a possession check, for `verity_possession_events_total{event=…}`.
    enum PossessionEvent: String, CaseIterable {
        case started
        case succeeded
        case failed
        case validated
    }

    func possession(_ event: PossessionEvent) { possessionCounter(event).increment() }

    private func possessionCounter(_ event: PossessionEvent) -> Counter {
        eventCounter("possession", event.rawValue, help: "Possession checks started, succeeded, failed and validated.")
    }

    /// A possession check succeeded by `method`, for `verity_possession_proofs_total{project=…, proof=…}`: `code`,
    /// `instant_link` or `carrier`, per project.
    func possessionProven(by method: PossessionMethod, project: String) {
        let proof =
            switch method {
            case .otp: "code"
            case .instantLink: "instant_link"
            case .silent: "carrier"
            }
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "possession", metricName: "proofs", unitName: "total",
                helpText: "Possession checks proven, by project and by the proof used (code, instant_link, carrier)."),
            labels: [("project", project), ("proof", proof)]
        ).increment()
    }

    /// App verification admitted a code's send by `proof`, for
    /// `verity_app_verification_proofs_total{project=…, proof=…}`: `silent_push` or `app_attest`, per project.
    func appVerified(by proof: AppVerificationProof, project: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "app_verification", metricName: "proofs", unitName: "total",
                helpText: "Code sends app verification admitted, by project and by the proof (silent_push, app_attest)."
            ),
            labels: [("project", project), ("proof", proof.rawValue)]
        ).increment()
    }

    /// What happened to a session, for `verity_sessions_events_total{event=…}`.
    enum SessionEvent: String, CaseIterable {
        case signUp = "sign_up"
        case signIn = "sign_in"
        case refresh
        /// A used refresh token came back; its session was revoked.
        case refreshTokenReused = "refresh_token_reused"
        case stepUp = "step_up"
    }

    func session(_ event: SessionEvent) { sessionCounter(event).increment() }

    private func sessionCounter(_ event: SessionEvent) -> Counter {
        eventCounter(
            "sessions", event.rawValue, help: "Sign-ups, sign-ins, refreshes, refresh-token reuses and step-ups.")
    }

    /// `verity_<subsystem>_events_total{event=…}`.
    private func eventCounter(_ subsystem: String, _ event: String, help: String) -> Counter {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: subsystem, metricName: "events", unitName: "total", helpText: help),
            labels: [("event", event)])
    }

    func request(method: String, route: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "http", metricName: "requests", unitName: "total",
                helpText: "HTTP requests by route, method and status."),
            labels: [("method", method), ("route", route), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                helpText: "HTTP request latency by route and method."),
            labels: [("method", method), ("route", route)], buckets: Self.latencyBuckets
        ).record(duration)
    }

    func verificationStarted(channel: Channel) { verificationCounter("started", channel: channel).increment() }
    func verificationApproved(channel: Channel) { verificationCounter("approved", channel: channel).increment() }
    /// A verification died of too many wrong codes.
    func verificationFailed(channel: Channel) { verificationCounter("failed", channel: channel).increment() }

    func messageDelivered(channel: OutboxChannel, outcome: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "outbox", metricName: "deliveries", unitName: "total",
                helpText: "Outbox delivery attempts by channel and outcome (sent, retry, dead)."),
            labels: [("channel", channel.rawValue), ("outcome", outcome)]
        ).increment()
    }

    func setOutboxDepth(_ depth: Int) { outboxDepth.set(Double(depth)) }

    func setKeyChangesHeard(_ heard: Bool) { keyChangesHeard.set(Double(heard ? 1 : 0)) }

    /// A challenge was created (`pending`) or reached an end: `approved`, `denied` or `expired`.
    func challenge(_ status: ChallengeStatus, type: FactorType) { challengeCounter(status, type: type).increment() }

    private func challengeCounter(_ status: ChallengeStatus, type: FactorType) -> Counter {
        let event = status == .pending ? "created" : status.rawValue
        return registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "challenges", metricName: event, unitName: "total",
                helpText: "Challenges \(event), by factor type."),
            labels: [("type", type.rawValue)])
    }

    private func verificationCounter(_ event: String, channel: Channel) -> Counter {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "verity", subsystem: "verifications", metricName: event, unitName: "total",
                helpText: "Verifications \(event), by channel."),
            labels: [("channel", channel.rawValue)])
    }
}
