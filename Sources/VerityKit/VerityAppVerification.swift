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
///
/// With ``AppAttestOptions``, it proves the app with App Attest instead where the device offers it: it attests one
/// key per installation (its identifier kept in the secure store), then signs an assertion over a fresh server
/// challenge for each request. When App Attest is unsupported or fails on the device, or the project does not take
/// it, it falls back to the silent push; ``lastMethod`` says which proof it used. A key the server refuses is
/// replaced by a newly attested one, once.
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
    private let appAttest: AppAttestProver?

    /// How the app was proved the last time: by App Attest or by silent push; `nil` before the first proof.
    public private(set) var lastMethod: AppVerificationMethod?
    /// Whether App Attest is off for this instance: unsupported, or not taken by the project.
    private var appAttestOff = false
    /// Whether a key the server refused was already replaced.
    private var reattested = false

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
    ///   - appAttest: Turns on App Attest, tried before the silent push; `nil` for the silent push only.
    public init(
        configuration: VerityConfiguration, projectId: String, transport: any Transport = URLSessionTransport(),
        logger: VerityLogger = .disabled, timeout: Duration = defaultTimeout,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        appAttest: AppAttestOptions? = nil
    ) {
        self.configuration = configuration
        self.projectId = projectId
        let client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.client = client
        self.appAttest = appAttest.map {
            AppAttestProver(options: $0, client: client, projectId: projectId, logger: logger)
        }
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

    /// The proof for the next request: a fresh assertion once a key is attested, otherwise the silent-push proof in
    /// use, if there is one.
    func currentProof() async throws -> String? {
        if let appAttest = activeAppAttest, let keyId = try appAttest.storedKeyId() {
            do {
                let proof = try await appAttest.proof(keyId: keyId)
                lastMethod = .appAttest
                return proof
            } catch {
                try appAttestFailed(error, appAttest)
            }
        }
        return proof
    }

    /// Runs `attempt` with the proof in use (none without a verifier); when the server answers
    /// `app_verification_required`, gets a new proof and runs it once more with that.
    static func withProof<Value>(
        from verifier: VerityAppVerification?, isolation: isolated (any Actor)? = #isolation,
        _ attempt: (_ proof: String?) async throws -> Value
    ) async throws -> Value {
        let proof = try await verifier?.currentProof()
        do {
            return try await attempt(proof)
        } catch let refusal as VerityKitError where refusal.serverErrorCode == .appVerificationRequired {
            guard let verifier else { throw refusal }
            return try await attempt(try await verifier.newProof(after: refusal, refused: proof))
        }
    }

    /// A new proof: by App Attest where it works, otherwise by silent push. Concurrent callers share one
    /// verification.
    ///
    /// - Parameters:
    ///   - refusal: The server's `app_verification_required`, thrown again when there is no way to prove the app.
    ///   - refused: The proof the server refused: when it was an assertion, the key is replaced, once.
    func newProof(after refusal: VerityKitError, refused: String? = nil) async throws -> String {
        if let verification { return try await verification.value }
        let task = Task { try await self.prove(after: refusal, refused: refused) }
        verification = task
        defer { verification = nil }
        return try await task.value
    }

    /// App Attest when it is on and this device offers it.
    private var activeAppAttest: AppAttestProver? {
        guard let appAttest, !appAttestOff, appAttest.isSupported else { return nil }
        return appAttest
    }

    private func prove(after refusal: VerityKitError, refused: String?) async throws -> String {
        if let appAttest = activeAppAttest {
            do {
                return try await attest(appAttest, refused: refused)
            } catch {
                try appAttestFailed(error, appAttest)
            }
        }
        guard let pushToken else {
            logger.log(.warning, "the project requires app verification, but no push token was set")
            throw refusal
        }
        proof = nil
        let proof = try await verify(pushToken, refusal: refusal)
        self.proof = proof
        lastMethod = .silentPush
        return proof
    }

    /// An assertion by the installation's attested key; a key the server refused is replaced once, after which App
    /// Attest is given up.
    private func attest(_ appAttest: AppAttestProver, refused: String?) async throws -> String {
        if AppAttestRoute.isAssertion(refused) {
            logger.log(.warning, "the server refused the App Attest key")
            try appAttest.forgetKey()
            guard !reattested else { throw AppAttestError.invalidKey }
            reattested = true
        }
        let proof = try await appAttest.proof(keyId: try await appAttest.attestedKeyId())
        lastMethod = .appAttest
        return proof
    }

    /// Decides what an App Attest failure means: a device failure or the project's refusal falls back to the silent
    /// push (for good when the device has no App Attest, the project does not take it, or a new key was refused too);
    /// anything else (no network, a storage failure) is thrown.
    private func appAttestFailed(_ error: any Error, _ appAttest: AppAttestProver) throws {
        switch error {
        case AppAttestError.unsupported:
            appAttestOff = true
        case AppAttestError.invalidKey:
            try appAttest.forgetKey()
            appAttestOff = reattested
        case is AppAttestError:
            break
        case let error as VerityKitError where error.problem != nil:
            appAttestOff = true
        default:
            throw error
        }
        logger.log(.warning, "App Attest failed (\(Self.describe(error))); falling back to the silent push")
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as AppAttestError: "\(error)"
        case let error as VerityKitError: error.problem?.code ?? error.code
        default: "unknown"
        }
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
