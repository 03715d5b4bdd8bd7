import Crypto
import Foundation
import VerityCore

/// Proof that a request comes from the project's real app, for projects that require it before sending codes
/// (`requiresAppVerification`): only the app installed on a device receives the silent pushes sent to its push
/// token, so an app that sends back the secret a silent push carried is the real one.
///
/// A proof needs no table: its id names its project and expiry, and its secret is an HMAC of the id under a key
/// derived from the master key, so the server can check it and nothing secret is stored (the outbox message holds
/// the id; the worker adds the secret as it sends). Each proof admits ``maxSends`` code sends, counted in the rate
/// limits, then the app asks for another.
///
/// A project with App Attest on (``ProjectSettings/appAttestEnabled``) also accepts an App Attest assertion
/// (``AppAttestProof``), which ``AppAttestService`` checks; it admits the one send it names.
struct AppVerificationService: Sendable, UsesRuntime {
    /// How long a proof works.
    static let lifetime: TimeInterval = 3600
    /// Code sends one proof admits.
    static let maxSends = 10
    /// App verifications one client address may ask for, per project.
    static let perClientAddress = RateLimitPolicy(capacity: 10, period: 600)
    /// The sends one proof admits: a bucket of ``maxSends`` that refills one send per hour, so a proof's hour adds at
    /// most one.
    private static let perProof = RateLimitPolicy(capacity: maxSends, period: lifetime * Double(maxSends))

    private let store: AppVerificationStore
    let key: SymmetricKey
    let limiter: RateLimiter
    let appAttest: AppAttestService
    let runtime: Runtime

    init(
        store: AppVerificationStore, key: SymmetricKey, limiter: RateLimiter, appAttest: AppAttestService,
        runtime: Runtime
    ) {
        self.store = store
        self.appAttest = appAttest
        self.key = key
        self.limiter = limiter
        self.runtime = runtime
    }

    /// Queues the silent push that carries a new proof's secret to the app.
    func start(_ request: AppVerificationRequest, clientAddress: String?, in project: Project) async throws
        -> AppVerificationStarted
    {
        guard request.pushPlatform == .apns || request.pushPlatform == .fcm else {
            throw VerityError(.invalidRequest, "`pushPlatform` must be apns or fcm.")
        }
        guard (1...4096).contains(request.pushToken.unicodeScalars.count) else {
            throw VerityError(.invalidRequest, "`pushToken` must be 1 to 4096 characters.")
        }
        if let appId = request.appId, !(1...255).contains(appId.unicodeScalars.count) {
            throw VerityError(.invalidRequest, "`appId` must be 1 to 255 characters.")
        }
        let now = clock.now()
        try await limiter.take(
            "app-verification:\(project.id):\(AuthService.clientBucket(clientAddress))", Self.perClientAddress,
            now: now)
        let expiresAt = Int(now.addingTimeInterval(Self.lifetime).timeIntervalSince1970)
        let id = "apv_\(expiresAt)_\(identifiers.secret(bytes: 16))"
        let push = PushNotification.silent(
            id: "", platform: request.pushPlatform, token: request.pushToken, appId: request.appId,
            data: ["type": AppVerificationPush.type, AppVerificationPush.idKey: id], expiresAt: expiresAt)
        try await store.queuePush(
            id: identifiers.make("msg"), proofId: id,
            payload: String(decoding: try JSONEncoder().encode(push), as: UTF8.self),
            projectId: project.id, now: now)
        outboxSignal.notify()
        return AppVerificationStarted(id: id, expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt)))
    }

    /// The secret of the proof `id` in `projectId`: what the silent push carries.
    func secret(for id: String, projectId: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(projectId):\(id)".utf8), using: key)
        return Base64URL.encode(Data(mac))
    }

    /// Checks the proof a request carries, when the project requires one, and counts one send against it.
    ///
    /// - Parameters:
    ///   - proof: The ``AuthHeaders/appVerification`` header: `<id>.<secret>`, or an App Attest assertion
    ///     (``AppAttestProof``).
    ///   - destination: The address the code goes to (``Destination/key``), which an assertion must name.
    /// - Returns: How the app proved itself, for the code the proof admits to record; nil when the project requires
    ///   no proof.
    /// - Throws: `app_verification_required` when the project requires a proof and this one is missing, wrong,
    ///   expired or used up.
    func requireProof(_ proof: String?, for destination: String, in project: Project) async throws
        -> AppVerificationProof?
    {
        guard project.settings.requiresAppVerification else { return nil }
        if let proof, proof.hasPrefix(AppAttestProof.scheme + ".") {
            try await appAttest.requireAssertion(proof, in: project)
            return .appAttest
        }
        let now = clock.now()
        guard let proof, proof.count <= 256, let dot = proof.lastIndex(of: ".") else {
            throw Self.required("This project sends codes only to its app: verify the app first.")
        }
        let id = String(proof[..<dot])
        let parts = id.split(separator: "_")
        guard parts.count == 3, parts[0] == "apv", let expiresAt = TimeInterval(parts[1]),
            CodeGenerator.constantTimeEquals(
                String(proof[proof.index(after: dot)...]), secret(for: id, projectId: project.id))
        else { throw Self.required("The app verification proof is not valid.") }
        guard expiresAt > now.timeIntervalSince1970 else {
            throw Self.required("The app verification proof expired; verify the app again.")
        }
        do {
            try await limiter.take("app-proof:\(project.id):\(id)", Self.perProof, now: now)
        } catch let error as VerityError where error.code == .rateLimited {
            throw Self.required("The app verification proof is used up; verify the app again.")
        }
        return .silentPush
    }

    static func required(_ detail: String) -> VerityError {
        VerityError(.appVerificationRequired, detail)
    }
}
