import Foundation
import VerityCore

/// Proves to a project that requires it that code requests come from this app, the way Firebase proves an app
/// before it sends an SMS: the server sends a silent push with a secret to this device's push token, and only the
/// real app receives it.
///
/// Create one per project, give it the push token, hand it every remote notification, and pass it to
/// ``VeritySession`` and ``VerityPossession``. They then do the rest: when the server answers
/// `app_verification_required`, they ask for a proof, wait for the silent push, and send the request again with the
/// proof, which they reuse until the server wants a new one (a proof works for an hour and ten sends).
///
/// ```swift
/// let appVerification = VerityAppVerification(configuration: configuration, projectId: "prj_123")
/// let verity = VeritySession(
///     configuration: configuration, projectId: "prj_123", store: KeychainSecureStore(),
///     appVerification: appVerification)
///
/// // application(_:didRegisterForRemoteNotificationsWithDeviceToken:)
/// await appVerification.setPushToken(deviceToken.map { String(format: "%02x", $0) }.joined(), platform: .apns)
///
/// // application(_:didReceiveRemoteNotification:fetchCompletionHandler:)
/// if appVerification.receiveNotification(userInfo) { completionHandler(.noData); return }
/// ```
///
/// The app needs the Remote notifications background mode, so that iOS wakes it for the silent push.
public actor VerityAppVerification {
    /// How long to wait for the silent push before giving up: APNs and FCM usually deliver within seconds.
    public static let defaultTimeout: Duration = .seconds(15)

    /// The project's public id (`prj_…`).
    public nonisolated let projectId: String

    private let configuration: VerityConfiguration
    private let client: VerityAPIClient
    private let logger: VerityLogger
    private let timeout: Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    private var pushToken: (platform: PushPlatform, token: String)?
    /// The proof in use (`<id>.<secret>`).
    private var proof: String?
    /// The verification under way, which every caller shares.
    private var verification: Task<String, any Error>?
    /// Callers waiting for the secret of a verification id.
    private var waiting: [String: CheckedContinuation<String, any Error>] = [:]
    /// Secrets that arrived before anyone waited for them.
    private var arrived: [String: String] = [:]

    /// Creates the verifier for one project.
    ///
    /// - Parameters:
    ///   - configuration: The server's base URL, and the app id sent as the APNs topic.
    ///   - projectId: The project's public id (`prj_…`).
    ///   - transport: Sends the HTTP requests.
    ///   - logger: Receives diagnostic messages, which never contain the secret.
    ///   - timeout: How long to wait for the silent push.
    ///   - sleep: Waits for the timeout; it throws when its task is cancelled.
    public init(
        configuration: VerityConfiguration, projectId: String, transport: any Transport = URLSessionTransport(),
        logger: VerityLogger = .disabled, timeout: Duration = defaultTimeout,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.configuration = configuration
        self.projectId = projectId
        self.client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.logger = logger
        self.timeout = timeout
        self.sleep = sleep
    }

    /// Sets the push token the silent push goes to: the APNs device token (hex) or the FCM registration token.
    public func setPushToken(_ token: String, platform: PushPlatform) {
        pushToken = (platform, token)
    }

    /// Takes a remote notification. Call it with every notification the app receives.
    ///
    /// - Parameter userInfo: The notification's payload.
    /// - Returns: Whether it was an app verification push, which the app should not handle further.
    @discardableResult
    public nonisolated func receiveNotification(_ userInfo: [AnyHashable: Any]) -> Bool {
        guard userInfo["type"] as? String == AppVerificationPush.type,
            let id = userInfo[AppVerificationPush.idKey] as? String,
            let secret = userInfo[AppVerificationPush.secretKey] as? String
        else { return false }
        Task { await self.deliver(id: id, secret: secret) }
        return true
    }

    /// The proof in use, if there is one.
    func currentProof() -> String? {
        proof
    }

    /// Runs `attempt` with the proof in use (none without a verifier); when the server answers
    /// `app_verification_required`, gets a new proof by silent push and runs it once more with that.
    static func withProof<Value>(
        from verifier: VerityAppVerification?, isolation: isolated (any Actor)? = #isolation,
        _ attempt: (_ proof: String?) async throws -> Value
    ) async throws -> Value {
        do {
            return try await attempt(await verifier?.currentProof())
        } catch let refusal as VerityKitError where refusal.serverErrorCode == .appVerificationRequired {
            guard let verifier else { throw refusal }
            return try await attempt(try await verifier.newProof(after: refusal))
        }
    }

    /// A new proof: asks the server for a silent push and waits for it. Concurrent callers share one verification.
    ///
    /// - Parameter refusal: The server's `app_verification_required`, thrown again when no push token is set.
    func newProof(after refusal: VerityKitError) async throws -> String {
        if let verification { return try await verification.value }
        guard let pushToken else {
            logger.log(.warning, "the project requires app verification, but no push token was set")
            throw refusal
        }
        proof = nil
        let task = Task { try await self.verify(pushToken, refusal: refusal) }
        verification = task
        defer { verification = nil }
        let proof = try await task.value
        self.proof = proof
        return proof
    }

    private func verify(_ pushToken: (platform: PushPlatform, token: String), refusal: VerityKitError) async throws
        -> String
    {
        let body = AppVerificationRequest(
            pushPlatform: pushToken.platform, pushToken: pushToken.token, appId: configuration.appId)
        let response = try await client.send(
            .post, "v1/auth/app-verification", body: try VerityAPIClient.encode(body),
            headers: [AuthHeaders.project: projectId], bearerToken: nil)
        let started = try client.decode(AppVerificationStarted.self, from: response, status: 202)
        logger.log(.info, "app verification \(started.id) started; waiting for its silent push")
        let secret = try await secret(for: started.id, refusal: refusal)
        logger.log(.info, "app verification \(started.id) received")
        return AppVerificationPush.proof(id: started.id, secret: secret)
    }

    /// Waits for the secret of `id`, or throws `refusal` when it does not come in time.
    private func secret(for id: String, refusal: VerityKitError) async throws -> String {
        if let secret = arrived.removeValue(forKey: id) { return secret }
        let (sleep, timeout) = (self.sleep, self.timeout)
        let timer = Task {
            try? await sleep(timeout)
            self.giveUp(id: id, refusal: refusal)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { waiting[id] = $0 }
    }

    private func deliver(id: String, secret: String) {
        if let continuation = waiting.removeValue(forKey: id) {
            continuation.resume(returning: secret)
        } else {
            arrived[id] = secret
        }
    }

    private func giveUp(id: String, refusal: VerityKitError) {
        guard let continuation = waiting.removeValue(forKey: id) else { return }
        logger.log(.warning, "app verification \(id): no silent push arrived in time")
        continuation.resume(throwing: refusal)
    }
}
