import Crypto
import Foundation
import VerityCore

/// The app's entry point to Verity push approval: enroll this device as a push factor, read challenges, approve or
/// deny them with the device key.
///
/// Create one instance and keep it; it is an actor because it owns the local factor records, which it reads, changes
/// and writes, and the correction for the device's clock. Every device request is authenticated by a fresh,
/// five-minute token signed by the factor's key. When the server refuses one with HTTP 401 and sends its `Date`, the
/// difference between the clocks is remembered and the request is retried once.
public actor VerityPush {
    /// Seconds a device token stays valid.
    public static let deviceTokenLifetime = 300

    /// The storage namespace of an instance that is not given one: its items are `verity.factors`,
    /// `verity.enrollment.…` and `verity.key.…`.
    public static let defaultStorageNamespace = "verity"

    private let factorsItem: String
    private let enrollmentItemPrefix: String

    /// The configuration this instance was created with.
    public nonisolated let configuration: VerityConfiguration
    /// This device's factors for the app's views, readable synchronously on the main actor and observable.
    public nonisolated let state: VerityPushState

    private let client: VerityAPIClient
    private let store: any SecureStore
    private let keys: FactorKeyStore
    private let logger: VerityLogger
    private let clock: @Sendable () -> Date
    private let installationMarker: any InstallationMarker
    private let userVerifier: any UserVerifier

    /// Seconds to add to the device clock to get the server's, measured from the last 401 answer's `Date`.
    public private(set) var clockOffset: TimeInterval = 0
    private var isPrepared = false

    /// Creates the SDK's entry point.
    ///
    /// - Parameters:
    ///   - configuration: The server and app settings.
    ///   - transport: Sends the HTTP requests.
    ///   - store: Keeps keys and factor records; on Apple platforms a `KeychainSecureStore`.
    ///   - logger: Receives diagnostic messages, which never contain secrets.
    ///   - clock: The current time.
    ///   - installationMarker: Detects a reinstall, for ``VerityConfiguration/clearStorageOnReinstall``.
    ///   - allowsSecureEnclave: Whether new device keys may go into the Secure Enclave, where there is one.
    ///   - userVerifier: Shows the biometric or passcode prompt before the user-verification key signs; `nil` for the
    ///     system's where there is one (`LocalAuthenticationUserVerifier`), elsewhere one that reports `unavailable`.
    ///   - storageNamespace: The prefix of this instance's item names in `store`, so that two instances over one
    ///     store (two environments, two apps in one group) keep apart.
    ///   - allowsSoftwareUserVerificationKeysForTesting: Whether a user-verification key may be a software key where
    ///     there is no Secure Enclave: tests and simulators only (see ``FactorKeyStore``).
    public init(
        configuration: VerityConfiguration,
        transport: any Transport = URLSessionTransport(),
        store: any SecureStore,
        logger: VerityLogger = .disabled,
        clock: @escaping @Sendable () -> Date = { Date() },
        installationMarker: any InstallationMarker = UserDefaultsInstallationMarker(),
        allowsSecureEnclave: Bool = true,
        userVerifier: (any UserVerifier)? = nil,
        storageNamespace: String = VerityPush.defaultStorageNamespace,
        allowsSoftwareUserVerificationKeysForTesting: Bool = false
    ) {
        self.userVerifier = userVerifier ?? defaultUserVerifier()
        self.configuration = configuration
        self.client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.store = store
        self.factorsItem = "\(storageNamespace).factors"
        self.enrollmentItemPrefix = "\(storageNamespace).enrollment."
        self.keys = FactorKeyStore(
            store: store, namespace: storageNamespace,
            enclave: allowsSecureEnclave ? FactorKeyStore.secureEnclave(for: store) : nil,
            allowsSoftwareUserVerificationKeys: allowsSoftwareUserVerificationKeysForTesting)
        self.logger = logger
        self.clock = clock
        self.installationMarker = installationMarker
        // The state shows the stored factors at once, unless this is a reinstall whose first use will clear them.
        let isCleared = configuration.clearStorageOnReinstall && !installationMarker.isPresent
        let stored = try? store.data(forKey: "\(storageNamespace).factors").map {
            try VerityAPIClient.makeDecoder().decode([PushFactor].self, from: $0)
        }
        self.state = VerityPushState(factors: isCleared ? [] : stored ?? [])
    }

    // MARK: - Factors

    /// Enrolls this device as a push factor: generates its key and registers the public key with the server.
    ///
    /// The factor is unverified until ``verifyFactor(_:)`` proves possession of the key; the enrollment token is
    /// kept in the secure store until then and deleted afterwards.
    ///
    /// - Parameters:
    ///   - enrollmentToken: The token the app's backend obtained for this user (`vet_…`).
    ///   - friendlyName: The name shown in the user's list of devices.
    ///   - pushPlatform: How notifications reach this device; `PushPlatform.none` to pull challenges instead.
    ///   - pushToken: The APNs device token (hex) or FCM registration token; required unless the platform is `none`.
    ///   - metadata: The app's own data about the factor (string values, at most `FactorMetadata.maxLength`
    ///     characters as JSON), which its backend reads with the factor.
    ///   - withUserVerification: Whether to enroll a second key whose use needs the owner (Face ID, Touch ID or
    ///     passcode): the only key that approves a challenge with `userVerification: required`.
    /// - Returns: The new, unverified factor.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an empty token or name, a missing push token or
    ///   metadata that does not fit, ``VerityKitError/server(_:)`` when the server refuses (an expired token is
    ///   `unauthorized`).
    public func createFactor(
        enrollmentToken: String, friendlyName: String, pushPlatform: PushPlatform, pushToken: String?,
        metadata: [String: String]? = nil, withUserVerification: Bool = false
    ) async throws -> PushFactor {
        try prepare()
        guard !enrollmentToken.isEmpty else { throw VerityKitError.input("The enrollment token is empty.") }
        let name = friendlyName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw VerityKitError.input("The friendly name is empty.") }
        if pushPlatform != .none, pushToken?.isEmpty ?? true {
            throw VerityKitError.input("A push token is required for \(pushPlatform.rawValue) notifications.")
        }
        try metadata.map(Self.requireValidMetadata)

        let key = try keys.createKey()
        let userVerificationKey = try await discarding(key) {
            withUserVerification ? try keys.createKey(requiringUserVerification: true) : nil
        }
        let enrolled = try await discarding(key, userVerificationKey) {
            let body = CreatePushFactorRequest(
                publicKey: key.publicKey.derBase64, friendlyName: name, pushPlatform: pushPlatform,
                pushToken: pushToken, appId: configuration.appId, sdkVersion: VerityConfiguration.sdkVersion,
                metadata: metadata, userVerificationKey: userVerificationKey?.publicKey.derBase64,
                apnsEnvironment: pushPlatform == .apns ? configuration.apnsEnvironment : nil)
            let response = try await client.send(
                .post, "v1/device/factors", body: try VerityAPIClient.encode(body), bearerToken: enrollmentToken)
            let enrolled = try client.decode(EnrolledPushFactor.self, from: response, status: 201)
            guard Identifier.isValid(enrolled.factor.id, prefix: Identifier.factorPrefix) else {
                throw VerityKitError.mapping("The server returned a malformed factor identifier.")
            }
            return enrolled
        }

        let factor = PushFactor(
            factor: enrolled.factor, pushToken: pushToken, keyReference: key.reference,
            userVerificationKeyReference: userVerificationKey?.reference)
        let pending = PendingEnrollment(token: enrollmentToken, nonce: enrolled.nonce)
        try storeItem(pending, forKey: enrollmentItemPrefix + factor.id)
        try saveFactor(factor)
        logger.log(.info, "enrolled push factor \(factor.id) (hardware key: \(key.isHardwareBacked))")
        return factor
    }

    /// Proves to the server that this device holds the factor's key, by signing the enrollment nonce.
    ///
    /// Calling it for a factor that is already verified returns the record unchanged.
    ///
    /// - Parameter factorId: A factor returned by
    ///   ``createFactor(enrollmentToken:friendlyName:pushPlatform:pushToken:metadata:withUserVerification:)``.
    /// - Returns: The verified factor.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor,
    ///   ``VerityKitError/authenticationToken(_:)`` when the enrollment token is no longer kept,
    ///   ``VerityKitError/server(_:)`` when the server refuses (an expired enrollment token is `unauthorized`).
    public func verifyFactor(_ factorId: String) async throws -> PushFactor {
        try prepare()
        var factor = try requireFactor(factorId)
        if factor.isVerified { return factor }
        guard let pending = try loadItem(PendingEnrollment.self, forKey: enrollmentItemPrefix + factorId) else {
            throw VerityKitError.authenticationToken(
                "The enrollment token of this factor is no longer kept; delete the factor and enroll again.")
        }
        let proof = try VerityAPIClient.encode(FactorProof(factorId: factorId, nonce: pending.nonce))
        let signature = try keys.signJWS(
            payload: Array(proof), keyID: factorId, type: "JWT", reference: factor.keyReference)
        let response = try await client.send(
            .post, "v1/device/factors/\(factorId)/verify",
            body: try VerityAPIClient.encode(VerifyPushFactorRequest(signature: signature)),
            bearerToken: pending.token)
        let verified = try client.decode(Factor.self, from: response, status: 200)
        guard verified.id == factorId else {
            throw VerityKitError.mapping("The server answered for another factor.")
        }

        factor = try requireFactor(factorId)
        factor.update(from: verified)
        try saveFactor(factor)
        try removeItem(forKey: enrollmentItemPrefix + factorId)
        logger.log(.info, "verified push factor \(factorId)")
        return factor
    }

    /// Registers a new push token (after the system rotated it) and, optionally, a new name.
    ///
    /// - Parameters:
    ///   - factorId: The factor to update.
    ///   - pushToken: The new push token, or `nil` to keep the current one.
    ///   - friendlyName: The new name, or `nil` to keep the current one.
    ///   - metadata: The app's new metadata, replacing the old as a whole (`[:]` removes it), or `nil` to keep it.
    /// - Returns: The updated factor.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor or metadata that does not fit,
    ///   ``VerityKitError/server(_:)``.
    public func updateFactor(
        _ factorId: String, pushToken: String?, friendlyName: String? = nil, metadata: [String: String]? = nil
    ) async throws -> PushFactor {
        try prepare()
        let factor = try requireFactor(factorId)
        try metadata.map(Self.requireValidMetadata)
        let body = try VerityAPIClient.encode(
            UpdateFactorRequest(pushToken: pushToken, friendlyName: friendlyName, metadata: metadata))
        let response = try await sendSigned(.patch, "v1/device/factors/\(factorId)", body: body, factor: factor)
        let updated = try client.decode(Factor.self, from: response, status: 200)

        var record = try requireFactor(factorId)
        record.update(from: updated)
        if let pushToken { record.pushToken = pushToken }
        try saveFactor(record)
        return record
    }

    /// Registers a new push token for every factor enrolled on this device that receives notifications: what the app
    /// calls from `didRegisterForRemoteNotificationsWithDeviceToken`, whichever factors it has.
    ///
    /// - Parameter pushToken: The new token, as the system gives it (hex for APNs, the registration token for FCM).
    /// - Returns: The factors, updated.
    /// - Throws: ``VerityKitError``, as ``updateFactor(_:pushToken:friendlyName:metadata:)`` does; the factors before
    ///   the failing one keep their new token.
    @discardableResult
    public func updatePushToken(_ pushToken: String) async throws -> [PushFactor] {
        try prepare()
        var updated: [PushFactor] = []
        for factor in try loadFactors() where factor.pushPlatform != .none && factor.pushToken != pushToken {
            updated.append(try await updateFactor(factor.id, pushToken: pushToken))
        }
        return updated
    }

    /// `updatePushToken(_:)` with a `String` for the APNs device token as the system hands it over.
    ///
    /// - Parameter deviceToken: The APNs device token.
    /// - Returns: The factors, updated.
    /// - Throws: ``VerityKitError``, as `updatePushToken(_:)` with a `String` does.
    @discardableResult
    public func updatePushToken(_ deviceToken: Data) async throws -> [PushFactor] {
        try await updatePushToken(Hex.encode(deviceToken))
    }

    /// Adds a user-verification key to the factor (or replaces its key): a new key whose use needs the owner, registered
    /// by a request signed with the factor's silent key. The silent key alone cannot pass for the owner, so the owner
    /// agrees too: a replacement is signed by the current user-verification key (the device asks its owner), and a
    /// first key needs a fresh enrollment token from your backend (a replacement may use one instead, for example
    /// when the old key no longer opens).
    ///
    /// - Parameters:
    ///   - factorId: The factor.
    ///   - enrollmentToken: A fresh enrollment token (`vet_…`) the backend minted for this user, spent by the change.
    /// - Returns: The factor, now with ``PushFactor/hasUserVerificationKey``.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor, ``VerityKitError/keyStorage(_:)``,
    ///   ``VerityKitError/userVerification(_:)`` when the owner did not verify for a replacement,
    ///   ``VerityKitError/server(_:)`` (the new key is then deleted again).
    public func addUserVerificationKey(factorId: String, enrollmentToken: String? = nil) async throws -> PushFactor {
        try prepare()
        let factor = try requireFactor(factorId)
        let key = try keys.createKey(requiringUserVerification: true)
        let updated = try await discarding(key) {
            let publicKey = key.publicKey.derBase64
            var proof: String?
            if let current = factor.userVerificationKeyReference, enrollmentToken == nil {
                // The current key signs only for its owner: the prompt first (a Secure Enclave key asks again).
                let outcome = await userVerifier.verifyUser(reason: "Replace the key that confirms it's you")
                guard case .verified = outcome else {
                    throw VerityKitError.userVerification(outcome.result)
                }
                proof = try keys.signJWS(
                    payload: Array(
                        try VerityAPIClient.encode(UserVerificationKeyProof(factorId: factorId, publicKey: publicKey))),
                    keyID: factorId, type: UserVerificationKeyProof.tokenType, reference: current)
            }
            let body = try VerityAPIClient.encode(
                SetUserVerificationKeyRequest(publicKey: publicKey, proof: proof, enrollmentToken: enrollmentToken))
            let response = try await sendSigned(
                .put, "v1/device/factors/\(factorId)/user-verification-key", body: body, factor: factor)
            return try client.decode(Factor.self, from: response, status: 200)
        }
        let record = try keepUserVerificationKey(key.reference, of: factorId, as: updated)
        logger.log(.info, "added a user-verification key to push factor \(factorId)")
        return record
    }

    /// Removes the factor's user-verification key, on the server (signed with the silent key) and then here. The
    /// factor then approves no challenge that requires user verification.
    ///
    /// - Parameter factorId: The factor.
    /// - Returns: The factor without a user-verification key.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor, ``VerityKitError/server(_:)``.
    public func removeUserVerificationKey(factorId: String) async throws -> PushFactor {
        try prepare()
        let factor = try requireFactor(factorId)
        let response = try await sendSigned(
            .delete, "v1/device/factors/\(factorId)/user-verification-key", factor: factor)
        let updated = try client.decode(Factor.self, from: response, status: 200)
        let record = try keepUserVerificationKey(nil, of: factorId, as: updated)
        logger.log(.info, "removed the user-verification key of push factor \(factorId)")
        return record
    }

    /// Runs `body`, which hands the server keys made for it (`newKeys`), and deletes those keys when it throws, so a
    /// refused or failed change leaves no key behind on the device.
    private func discarding<T>(_ newKeys: FactorKeyHandle?..., unless body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            for key in newKeys.compactMap({ $0 }) { try? keys.deleteKey(reference: key.reference) }
            throw error
        }
    }

    /// Saves the factor as the server answered (`updated`) with `reference` as its user-verification key (nil for
    /// none), and deletes the key it had before.
    private func keepUserVerificationKey(_ reference: String?, of factorId: String, as updated: Factor) throws
        -> PushFactor
    {
        var record = try requireFactor(factorId)
        let old = record.userVerificationKeyReference
        record.update(from: updated)
        record.userVerificationKeyReference = reference
        try saveFactor(record)
        if let old { try keys.deleteKey(reference: old) }
        return record
    }

    /// Replaces the factor's silent (proof-of-possession) key: the request is signed by the old key, and the new key
    /// signs a proof of its own; the old key is deleted once the server took the new one.
    ///
    /// - Parameter factorId: The factor.
    /// - Returns: The factor, signing with its new key from now on.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor, ``VerityKitError/server(_:)``
    ///   (the old key is then kept).
    public func rotateKey(factorId: String) async throws -> PushFactor {
        try prepare()
        let factor = try requireFactor(factorId)
        let key = try keys.createKey()
        let updated = try await discarding(key) {
            let publicKey = key.publicKey.derBase64
            let proof = try keys.signJWS(
                payload: Array(try VerityAPIClient.encode(KeyRotationProof(factorId: factorId, publicKey: publicKey))),
                keyID: factorId, type: KeyRotationProof.tokenType, reference: key.reference)
            let body = try VerityAPIClient.encode(RotateFactorKeyRequest(publicKey: publicKey, proof: proof))
            let response = try await sendSigned(
                .post, "v1/device/factors/\(factorId)/rotate-key", body: body, factor: factor)
            return try client.decode(Factor.self, from: response, status: 200)
        }
        var record = try requireFactor(factorId)
        record.update(from: updated)
        record.keyReference = key.reference
        try saveFactor(record)
        try keys.deleteKey(reference: factor.keyReference)
        logger.log(.info, "rotated the key of push factor \(factorId)")
        return record
    }

    /// Deletes the factor on the server, then its key and record on this device.
    ///
    /// When the server no longer knows the factor, the local copy is deleted all the same.
    ///
    /// - Parameter factorId: The factor to delete.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor, ``VerityKitError/server(_:)``
    ///   (the local factor is then kept).
    public func deleteFactor(_ factorId: String) async throws {
        try prepare()
        let factor = try requireFactor(factorId)
        let response = try await sendSigned(.delete, "v1/device/factors/\(factorId)", factor: factor)
        do {
            try client.check(response, status: 204)
        } catch let error as VerityKitError
            where error.serverErrorCode == .factorNotFound || error.serverErrorCode == .notFound
        {
            logger.log(.info, "push factor \(factorId) was already gone on the server")
        }
        try removeLocalFactor(factor)
        logger.log(.info, "deleted push factor \(factorId)")
    }

    /// The push factors enrolled on this device, oldest first.
    ///
    /// - Returns: The local records.
    /// - Throws: ``VerityKitError/storage(_:)`` or ``VerityKitError/mapping(_:)`` when the records cannot be read.
    public func factors() throws -> [PushFactor] {
        try prepare()
        return try loadFactors()
    }

    // MARK: - Challenges

    /// Fetches a challenge addressed to one of this device's factors.
    ///
    /// - Parameters:
    ///   - id: The challenge identifier (`chl_…`), for example from ``parsePushPayload(_:)``.
    ///   - factorId: The factor it was sent to.
    /// - Returns: The challenge, with what to show and what to sign.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor or malformed id,
    ///   ``VerityKitError/server(_:)`` (`challenge_not_found`, `wrong_factor` …).
    public func getChallenge(id: String, factorId: String) async throws -> DeviceChallenge {
        try prepare()
        let factor = try requireFactor(factorId)
        return try await fetchChallenge(id: id, factor: factor)
    }

    /// The challenges waiting for an answer from this factor, newest first: every page the server has.
    ///
    /// - Parameter factorId: The factor.
    /// - Returns: The pending challenges.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor, ``VerityKitError/server(_:)``.
    public func pendingChallenges(factorId: String) async throws -> [DeviceChallenge] {
        try prepare()
        let factor = try requireFactor(factorId)
        var challenges: [DeviceChallenge] = []
        var cursor: String?
        // Every page, newest first; the page count is bounded so that a server answering the same cursor again
        // cannot keep the app looping.
        for _ in 0..<Self.maxChallengePages {
            var query = [URLQueryItem(name: "status", value: "pending")]
            if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
            let response = try await sendSigned(
                .get, "v1/device/factors/\(factorId)/challenges", query: query, factor: factor)
            let page = try client.decode(Page<DeviceChallenge>.self, from: response, status: 200)
            challenges += page.items
            guard let next = page.nextCursor, next != cursor, !page.items.isEmpty else { break }
            cursor = next
        }
        return challenges
    }

    /// The most pages of pending challenges ``pendingChallenges(factorId:)`` reads (50 challenges a page).
    static let maxChallengePages = 20

    /// Approves a challenge: fetches it, signs the approval over its content with the factor's key, and sends it.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge.
    ///   - factorId: The factor answering.
    /// - Returns: The challenge as the server now has it (status `approved`).
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` says when the challenge expired
    ///   (`challenge_expired`) or was already answered (`challenge_already_answered`).
    ///
    /// When the challenge asks for user verification and the factor has a user-verification key, the owner is asked
    /// first (the ``UserVerifier``, one prompt) and that key signs. When the device cannot verify its owner
    /// (`unavailable`), a `preferred` challenge is approved with the silent key and the result is reported; when the
    /// owner cancels or fails the prompt, nothing is approved (``resolve(challengeId:factorId:handler:)`` lets the app
    /// approve a `preferred` one anyway, explicitly); a `required` one is never approved without the owner.
    ///
    /// - Throws: also ``VerityKitError/userVerification(_:)`` when the challenge could not be approved because the
    ///   owner did not verify; the challenge then stays pending.
    public func approve(challengeId: String, factorId: String) async throws -> DeviceChallenge {
        let resolution = try await resolve(challengeId: challengeId, factorId: factorId) { step in
            if case .consent = step { return .approve }
            return .proceed
        }
        guard case .approved = resolution.outcome else {
            throw VerityKitError.userVerification(resolution.userVerificationResult ?? .unavailable)
        }
        return resolution.challenge
    }

    /// Denies a challenge: fetches it, signs the denial over its content with the factor's key, and sends it.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge.
    ///   - factorId: The factor answering.
    /// - Returns: The challenge as the server now has it (status `denied`).
    /// - Throws: ``VerityKitError``, as for ``approve(challengeId:factorId:)``.
    public func deny(challengeId: String, factorId: String) async throws -> DeviceChallenge {
        try await deny(challengeId: challengeId, factorId: factorId, reason: nil)
    }

    /// Denies a challenge, optionally reporting unusual activity ("this wasn't me"): the reason is signed with the
    /// denial, and the server records a security event, sends its webhook and applies the project's response.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge.
    ///   - factorId: The factor answering.
    ///   - reason: Why the user denies, or `nil` for a plain denial.
    /// - Returns: The challenge as the server now has it (status `denied`).
    /// - Throws: ``VerityKitError``, as for ``approve(challengeId:factorId:)``.
    public func deny(challengeId: String, factorId: String, reason: DenyReason?) async throws -> DeviceChallenge {
        try prepare()
        let factor = try requireFactor(factorId)
        let challenge = try await fetchChallenge(id: challengeId, factor: factor)
        return try await send(.denied, to: challenge, factor: factor, reason: reason)
    }

    /// Answers a challenge step by step, the way the app shows it: `handler` gets each ``RemediationStep`` in turn and
    /// says how to go on.
    ///
    /// The steps are: ``RemediationStep/consent(_:)`` (approve, deny with or without a reason, or no decision); then,
    /// for an approval of a challenge whose `userVerification` is `required` or `preferred` when the factor has a
    /// user-verification key, ``RemediationStep/userVerification(_:)`` before the prompt; and a
    /// ``RemediationStep/message(_:)`` when the prompt was cancelled, failed or unavailable, or when a `required`
    /// challenge meets a factor without a user-verification key. Every answer sent is signed; a `required` challenge
    /// is never approved with the silent key; ``RemediationDecision/noDecision`` leaves the challenge pending.
    ///
    ///     let resolution = try await push.resolve(challengeId: id, factorId: factor.id) { step in
    ///         switch step {
    ///         case .consent(let challenge): return await askUser(challenge)  // .approve, .deny(reason:), .noDecision
    ///         case .userVerification: return .proceed
    ///         case .message(let message): return await tellUser(message)     // .proceed, .deny(reason:), .noDecision
    ///         }
    ///     }
    ///
    /// - Parameters:
    ///   - challengeId: The challenge (`chl_…`).
    ///   - factorId: The factor answering.
    ///   - handler: Decides each step; it may show UI and wait for the user.
    /// - Returns: What happened, with the steps given.
    /// - Throws: ``VerityKitError``: ``VerityKitError/input(_:)`` for an unknown factor or malformed id,
    ///   ``VerityKitError/server(_:)`` when the server refuses the answer.
    public func resolve(
        challengeId: String, factorId: String,
        handler: @Sendable (RemediationStep) async throws -> RemediationDecision
    ) async throws -> ChallengeResolution {
        try prepare()
        let factor = try requireFactor(factorId)
        let challenge = try await fetchChallenge(id: challengeId, factor: factor)
        var steps: [RemediationStep] = [.consent(challenge)]
        let consent = try await handler(.consent(challenge))
        if let ended = try await endWithout(consent, challenge: challenge, factor: factor) {
            return ChallengeResolution(challenge: ended.0, outcome: ended.1, userVerificationResult: nil, steps: steps)
        }
        let required = challenge.userVerification == .required
        let wantsVerification = required || (challenge.userVerification == .preferred && factor.hasUserVerificationKey)
        guard wantsVerification else {
            let answered = try await send(.approved, to: challenge, factor: factor)
            return ChallengeResolution(
                challenge: answered, outcome: .approved(.proofOfPossession), userVerificationResult: nil, steps: steps)
        }

        let message: RemediationMessage
        if let reference = factor.userVerificationKeyReference {
            steps.append(.userVerification(challenge))
            let prompt = try await handler(.userVerification(challenge))
            if let ended = try await endWithout(prompt, challenge: challenge, factor: factor) {
                return ChallengeResolution(
                    challenge: ended.0, outcome: ended.1, userVerificationResult: nil, steps: steps)
            }
            let verification = await userVerifier.verifyUserForSigning(reason: challenge.message)
            let outcome = verification.outcome
            if case .verified(let method) = outcome {
                let answered = try await send(
                    .approved, to: challenge, factor: factor,
                    userVerification: (reference, method, verification))
                return ChallengeResolution(
                    challenge: answered, outcome: .approved(.userVerification), userVerificationResult: .verified,
                    steps: steps)
            }
            message = .userVerificationFailed(outcome.result)
        } else {
            message = .userVerificationKeyMissing
        }
        let result: UserVerificationResult =
            if case .userVerificationFailed(let failure) = message { failure } else { .unavailable }
        logger.log(.info, "user verification for challenge \(challenge.id): \(result.rawValue)")
        steps.append(.message(message))
        switch try await handler(.message(message)) {
        case .deny(let reason):
            let answered = try await send(.denied, to: challenge, factor: factor, reason: reason, result: result)
            return ChallengeResolution(
                challenge: answered, outcome: .denied(reason), userVerificationResult: result, steps: steps)
        case .approve where !required, .proceed where !required && result == .unavailable:
            // `preferred`: the silent key approves, and the answer says the owner's verification did not succeed. A
            // cancelled or failed prompt is the owner saying no, or someone else trying: only the app's explicit
            // `.approve` goes on without it.
            let answered = try await send(.approved, to: challenge, factor: factor, result: result)
            return ChallengeResolution(
                challenge: answered, outcome: .approved(.proofOfPossession), userVerificationResult: result,
                steps: steps)
        default:
            // Never downgraded: a `required` challenge stays pending.
            return ChallengeResolution(
                challenge: challenge, outcome: .pending, userVerificationResult: result, steps: steps)
        }
    }

    /// Carries out a decision that ends the resolution before an approval (deny, no decision); nil to go on.
    private func endWithout(_ decision: RemediationDecision, challenge: DeviceChallenge, factor: PushFactor)
        async throws -> (DeviceChallenge, ChallengeResolution.Outcome)?
    {
        switch decision {
        case .noDecision: return (challenge, .pending)
        case .deny(let reason):
            return (try await send(.denied, to: challenge, factor: factor, reason: reason), .denied(reason))
        case .approve, .proceed: return nil
        }
    }

    /// Approves or denies the challenge a push notification announces.
    ///
    /// Deprecated: the payload is not `Sendable`, so a caller on the main actor (a content extension) cannot hand it to
    /// this actor. Read the response where it arrives with ``NotificationResponseDecision`` and call
    /// ``respond(to:)``.
    ///
    /// - Parameters:
    ///   - userInfo: The notification's payload.
    ///   - approve: `true` to approve (as ``approve(challengeId:factorId:)`` does), `false` to deny.
    ///   - reason: For a denial, why ("this wasn't me").
    /// - Returns: The challenge as the server now has it.
    /// - Throws: ``VerityKitError``, as ``parsePushPayload(_:)`` and ``approve(challengeId:factorId:)`` do.
    @available(*, deprecated, message: "Read the response with NotificationResponseDecision, then call respond(to:)")
    public func respond(toNotification userInfo: [AnyHashable: Any], approve: Bool, reason: DenyReason? = nil)
        async throws -> DeviceChallenge
    {
        let notification = try parsePushPayload(userInfo)
        return try await respond(to: notification, approve: approve, reason: reason)
    }

    /// Carries out what the user chose on a notification: what a notification content extension, or the app's
    /// notification delegate, calls for Verity's action buttons. An extension's `VerityPush` must share the app's store
    /// (a Keychain access group or an app-group directory; see the documentation).
    ///
    /// Approving goes through ``approve(challengeId:factorId:)``: the challenge is fetched and checked again, and one
    /// that asks for the owner shows the prompt.
    ///
    /// - Parameter decision: The response, read where it arrived.
    /// - Returns: The challenge as the server now has it, or `nil` for ``NotificationResponseDecision/Action/open``
    ///   (the app shows the challenge itself).
    /// - Throws: ``VerityKitError``, as ``approve(challengeId:factorId:)`` and ``deny(challengeId:factorId:reason:)``
    ///   do.
    public func respond(to decision: NotificationResponseDecision) async throws -> DeviceChallenge? {
        switch decision.action {
        case .approve: try await respond(to: decision.notification, approve: true)
        case .deny(let reason): try await respond(to: decision.notification, approve: false, reason: reason)
        case .open: nil
        }
    }

    /// What a notification service extension shows instead of the notification as sent: the challenge fetched from
    /// the server and checked (its content hash matches what it shows), with the category that offers the right
    /// actions. Nothing is answered: a service extension never hears what the user does.
    ///
    /// - Parameter notification: The notification, read with ``parsePushPayload(_:)``.
    /// - Returns: The content to show.
    /// - Throws: ``VerityKitError``, as ``getChallenge(id:factorId:)`` does; show
    ///   ``ChallengeNotificationContent/unverified`` then.
    public func notificationContent(for notification: PushChallengeNotification) async throws
        -> ChallengeNotificationContent
    {
        let challenge = try await getChallenge(id: notification.challengeId, factorId: notification.factorId)
        var content = ChallengeNotificationContent(challenge: challenge)
        content.title = notification.title
        return content
    }

    /// ``respond(toNotification:approve:reason:)`` for a notification already parsed.
    ///
    /// - Parameters:
    ///   - notification: The parsed notification.
    ///   - approve: `true` to approve, `false` to deny.
    ///   - reason: For a denial, why.
    /// - Returns: The challenge as the server now has it.
    /// - Throws: ``VerityKitError``, as ``approve(challengeId:factorId:)`` does.
    public func respond(to notification: PushChallengeNotification, approve: Bool, reason: DenyReason? = nil)
        async throws -> DeviceChallenge
    {
        if approve {
            return try await self.approve(challengeId: notification.challengeId, factorId: notification.factorId)
        }
        return try await deny(challengeId: notification.challengeId, factorId: notification.factorId, reason: reason)
    }

    /// Reads a push notification's payload (APNs `userInfo` or FCM data).
    ///
    /// - Parameter userInfo: The payload.
    /// - Returns: The challenge it announces.
    /// - Throws: ``VerityKitError/mapping(_:)`` for a notification that is not Verity's, ``VerityKitError/input(_:)``
    ///   for a Verity notification with missing or malformed identifiers.
    public nonisolated func parsePushPayload(_ userInfo: [AnyHashable: Any]) throws -> PushChallengeNotification {
        try PushChallengeNotification(payload: userInfo)
    }

    /// Deletes this device's push state — every factor's key, its record and its pending enrollment — without
    /// telling the server (its backend can delete the factors there).
    ///
    /// Only push state goes: a ``VeritySession`` that shares the store stays signed in, and anything else the app
    /// keeps in the store stays too.
    ///
    /// - Throws: ``VerityKitError/storage(_:)`` when the store cannot be cleared.
    public func clearLocalStorage() throws {
        try clearPushState()
        logger.log(.info, "cleared local push state")
    }

    /// Forgets one factor on this device only: its key, its record and its pending enrollment. The server still
    /// has the factor (``deleteFactor(_:)`` deletes it there too), but this device can no longer answer for it.
    ///
    /// - Parameter factorId: The factor to forget.
    /// - Throws: ``VerityKitError/input(_:)`` for a factor not enrolled on this device, ``VerityKitError/storage(_:)``.
    public func forgetFactor(_ factorId: String) throws {
        try removeLocalFactor(try requireFactor(factorId))
        logger.log(.info, "forgot push factor \(factorId) on this device")
    }

    // MARK: - Requests

    /// Signs `answer` over exactly what the device shows and sends it. With `userVerification`, the
    /// user-verification key signs (the owner verified by that method); otherwise the silent key does.
    private func send(
        _ answer: ChallengeAnswer, to challenge: DeviceChallenge, factor: PushFactor, reason: DenyReason? = nil,
        result: UserVerificationResult? = nil,
        userVerification: (reference: String, method: UserVerificationMethod, verification: OwnerVerification)? = nil
    ) async throws -> DeviceChallenge {
        let payload = ChallengeSigningPayload(
            challengeId: challenge.id, factorId: factor.id, contentHash: challenge.contentHash, status: answer,
            keyType: userVerification == nil ? nil : .userVerification, amr: userVerification.map { [$0.method] },
            reason: reason, userVerificationResult: userVerification == nil ? result : .verified)
        let signature = try keys.signChallengeAnswer(
            payload, keyID: factor.id, reference: userVerification?.reference ?? factor.keyReference,
            verification: userVerification?.verification)
        let body = try VerityAPIClient.encode(RespondChallengeRequest(signed: payload, signature: signature))
        let response = try await sendSigned(
            .post, "v1/device/factors/\(factor.id)/challenges/\(challenge.id)/respond", body: body, factor: factor)
        let answered = try client.decode(DeviceChallenge.self, from: response, status: 200)
        logger.log(.info, "answered challenge \(challenge.id) with \(answer.rawValue)")
        return answered
    }

    private func fetchChallenge(id: String, factor: PushFactor) async throws -> DeviceChallenge {
        guard Identifier.isValid(id, prefix: Identifier.challengePrefix) else {
            throw VerityKitError.input("The challenge identifier is malformed.")
        }
        let response = try await sendSigned(.get, "v1/device/factors/\(factor.id)/challenges/\(id)", factor: factor)
        let challenge = try client.decode(DeviceChallenge.self, from: response, status: 200)
        guard challenge.id == id, Identifier.isValid(challenge.id, prefix: Identifier.challengePrefix) else {
            throw VerityKitError.mapping("The server answered with another challenge.")
        }
        // Sign only what the device can vouch for: the hash must be that of the content it shows the user.
        let shownHash = ChallengeSigningPayload.displayedContentHash(
            message: challenge.message, details: challenge.details.map { (label: $0.label, value: $0.value) },
            context: challenge.context)
        guard shownHash == challenge.contentHash else {
            throw VerityKitError.mapping("The challenge's content hash does not match what it shows.")
        }
        return challenge
    }

    /// Sends a request authenticated by a fresh device token; after a 401 with a `Date`, corrects the clock and
    /// retries once with a new token.
    private func sendSigned(
        _ method: TransportRequest.Method, _ path: String, query: [URLQueryItem] = [], body: Data? = nil,
        factor: PushFactor
    ) async throws -> TransportResponse {
        let response = try await client.send(
            method, path, query: query, body: body, bearerToken: try deviceToken(for: factor))
        guard response.status == 401,
            let dateHeader = response.value(forHeader: "Date"),
            let serverDate = VerityAPIClient.parseHTTPDate(dateHeader)
        else { return response }

        clockOffset = serverDate.timeIntervalSince(clock())
        logger.log(
            .info, "device token refused; server clock differs by \(Int(clockOffset.rounded())) s, retrying once")
        return try await client.send(
            method, path, query: query, body: body, bearerToken: try deviceToken(for: factor))
    }

    /// A device JWT for `factor`: ES256, `kid` and `sub` the factor id, valid ``deviceTokenLifetime`` seconds from the
    /// corrected current time, with a random `jti`.
    private func deviceToken(for factor: PushFactor) throws -> String {
        let issuedAt = Int((clock().timeIntervalSince1970 + clockOffset).rounded(.down))
        var random = SystemRandomNumberGenerator()
        let jti = Base64URL.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        let claims = DeviceTokenClaims(
            sub: factor.id, iat: issuedAt, exp: issuedAt + Self.deviceTokenLifetime, jti: jti)
        let payload: Data
        do {
            payload = try VerityAPIClient.encode(claims)
        } catch {
            throw VerityKitError.authenticationToken("The device token could not be encoded.")
        }
        do {
            return try keys.signJWS(
                payload: Array(payload), keyID: factor.id, type: "JWT", reference: factor.keyReference)
        } catch {
            throw VerityKitError.authenticationToken(
                "The device token could not be signed: \(error.localizedDescription)")
        }
    }

    // MARK: - Local records

    /// Checks the configuration and, once per instance, wipes the store after a reinstall when configured to.
    private func prepare() throws {
        guard !isPrepared else { return }
        try configuration.validateBaseURL()
        if configuration.clearStorageOnReinstall && !installationMarker.isPresent {
            try clearPushState()
            installationMarker.setPresent()
            logger.log(.info, "first run of this installation: cleared local push state")
        }
        isPrepared = true
    }

    /// Removes every factor's key, record and pending enrollment; an unreadable factor list is removed all the same.
    private func clearPushState() throws {
        let factors = (try? loadFactors()) ?? []
        for factor in factors {
            try keys.deleteKey(reference: factor.keyReference)
            if let reference = factor.userVerificationKeyReference { try keys.deleteKey(reference: reference) }
            try removeItem(forKey: enrollmentItemPrefix + factor.id)
        }
        try removeItem(forKey: factorsItem)
        publish([])
        clockOffset = 0
    }

    private func requireFactor(_ factorId: String) throws -> PushFactor {
        guard let factor = try loadFactors().first(where: { $0.id == factorId }) else {
            throw VerityKitError.input("No push factor \(factorId) is enrolled on this device.")
        }
        return factor
    }

    private func loadFactors() throws -> [PushFactor] {
        try loadItem([PushFactor].self, forKey: factorsItem) ?? []
    }

    private func saveFactor(_ factor: PushFactor) throws {
        var factors = try loadFactors()
        if let index = factors.firstIndex(where: { $0.id == factor.id }) {
            factors[index] = factor
        } else {
            factors.append(factor)
            factors.sort { $0.createdAt < $1.createdAt }
        }
        try storeItem(factors, forKey: factorsItem)
        publish(factors)
    }

    private func removeLocalFactor(_ factor: PushFactor) throws {
        try keys.deleteKey(reference: factor.keyReference)
        if let reference = factor.userVerificationKeyReference { try keys.deleteKey(reference: reference) }
        try removeItem(forKey: enrollmentItemPrefix + factor.id)
        let remaining = try loadFactors().filter { $0.id != factor.id }
        try storeItem(remaining, forKey: factorsItem)
        publish(remaining)
    }

    private static func requireValidMetadata(_ metadata: [String: String]) throws {
        guard FactorMetadata.isValid(metadata) else {
            throw VerityKitError.input(
                "The metadata must have non-empty keys and take at most \(FactorMetadata.maxLength) characters as JSON."
            )
        }
    }

    /// Hands the factors to ``state`` on the main actor, which runs its jobs in the order the actor made them.
    private func publish(_ factors: [PushFactor]) {
        Task { @MainActor [state] in state.factors = factors }
    }

    private func loadItem<Value: Decodable>(_ type: Value.Type, forKey key: String) throws -> Value? {
        guard let data = try wrapStorage({ try store.data(forKey: key) }) else { return nil }
        do {
            return try VerityAPIClient.makeDecoder().decode(type, from: data)
        } catch {
            throw VerityKitError.mapping("A stored record is damaged.")
        }
    }

    private func storeItem(_ value: some Encodable, forKey key: String) throws {
        let data = try VerityAPIClient.encode(value)
        try wrapStorage { try store.set(data, forKey: key) }
    }

    private func removeItem(forKey key: String) throws {
        try wrapStorage { try store.removeData(forKey: key) }
    }

    private func wrapStorage<Value>(_ operation: () throws -> Value) throws -> Value {
        do {
            return try operation()
        } catch let error as VerityKitError {
            throw error
        } catch {
            throw VerityKitError.storage(error.localizedDescription)
        }
    }
}

/// What ``VerityPush/verifyFactor(_:)`` needs from enrollment, kept only until then.
private struct PendingEnrollment: Codable {
    var token: String
    var nonce: String
}
