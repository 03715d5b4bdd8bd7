import Crypto
import Foundation
import Logging
import VerityCore

/// Enrollment tokens, push factors bound to device keys, TOTP factors, and device authentication.
struct FactorService: Sendable, UsesRuntime {
    static let enrollmentTokenPrefix = "vet_"
    /// Device tokens may live at most this long (`exp - iat`).
    static let maxDeviceTokenLifetime: TimeInterval = 600
    /// Clock skew tolerated on `iat`/`exp`.
    static let leeway: TimeInterval = 60
    /// Wrong codes or proofs in a row that lock a factor's checks (Twilio's factor verification limit).
    static let maxFailedAttempts = 5
    /// How long a verified factor stays locked after its last attempt; an unverified one stays locked for good
    /// (delete it and enroll again).
    static let lockout: TimeInterval = 900
    static let locked = VerityError(
        .factorLocked,
        "Too many wrong codes for this factor; try again in 15 minutes, or enroll an unverified one again.")

    private let store: FactorStore
    let sealer: SecretSealer
    let runtime: Runtime

    init(store: FactorStore, sealer: SecretSealer, runtime: Runtime) {
        self.store = store
        self.sealer = sealer
        self.runtime = runtime
    }

    // MARK: - Backend

    /// - Parameter dialect: The protocol whose user ids and token lifetimes the request speaks of.
    func createEnrollmentToken(
        _ request: CreateEnrollmentTokenRequest, in project: Project, dialect: FactorDialect = .verity
    ) async throws -> EnrollmentToken {
        let userId = try dialect.validUserId(request.userId)
        let lifetime = try dialect.value(
            request.expiresIn ?? dialect.defaultEnrollmentLifetime, of: .expiresIn, within: dialect.enrollmentLifetimes,
            unit: "seconds")
        let now = clock.now()
        let token = Self.enrollmentTokenPrefix + identifiers.secret(bytes: 32)
        let expiresAt = now.addingTimeInterval(TimeInterval(lifetime))
        try await store.insertEnrollmentToken(
            hash: SecretHash.hex(token), projectId: project.id, userId: userId, now: now, expiresAt: expiresAt)
        return EnrollmentToken(token: token, userId: userId, expiresAt: expiresAt)
    }

    /// The largest page of a user's factors.
    static let maxPage = 100

    /// A page of the user's factors, oldest first, after the factor `cursor` names.
    func factors(userId: String, cursor: String? = nil, limit: Int? = nil, in project: Project) async throws
        -> Page<Factor>
    {
        let userId = try Self.validUserId(userId)
        let limit = try Paging.limit(limit, max: Self.maxPage)
        try Paging.requireCursor(cursor, prefix: "fac_")
        // One more than asked tells whether there is a next page.
        let found = try await store.factors(userId: userId, projectId: project.id, after: cursor, limit: limit + 1)
        return Page(fetched: found.map(\.response), limit: limit, cursor: \.id)
    }

    /// The user's verified push factors: where a challenge to the user goes.
    func verifiedPushFactors(userId: String, in project: Project) async throws -> [FactorRecord] {
        try await verifiedFactors(userId: userId, in: project).filter { $0.type == .push }
    }

    /// The user's verified factors, every one: what a step-up may use.
    func verifiedFactors(userId: String, in project: Project) async throws -> [FactorRecord] {
        try await store.factors(userId: userId, projectId: project.id).filter { $0.status == .verified }
    }

    func factor(id: String, in project: Project) async throws -> FactorRecord {
        guard let factor = try await findFactor(id: id, in: project) else {
            throw VerityError(.factorNotFound, "No factor \(id) in this project.")
        }
        return factor
    }

    /// The project's factor `id`, or nil when it has none.
    func findFactor(id: String, in project: Project) async throws -> FactorRecord? {
        try await store.factor(id: id, projectId: project.id)
    }

    /// Whether the enrollment token behind `tokenHash` is unexpired and has not enrolled a factor yet.
    func isEnrollmentOpen(tokenHash: String) async throws -> Bool {
        guard let token = try await store.enrollmentToken(hash: tokenHash, now: clock.now()) else { return false }
        return token.factorId == nil
    }

    func delete(id: String, in project: Project) async throws {
        guard try await store.delete(id: id, projectId: project.id, now: clock.now()) else {
            throw VerityError(.factorNotFound, "No factor \(id) in this project.")
        }
    }

    /// A device removing its own factor.
    func delete(_ factor: FactorRecord) async throws {
        guard try await store.delete(id: factor.id, projectId: factor.projectId, now: clock.now()) else {
            throw VerityError(.factorNotFound)
        }
        logger.info("Push factor deleted by its device", metadata: ["factor": "\(factor.id)"])
    }

    /// Deletes the project's factors `ids` in the caller's unit of work (a face's own records of them go with them),
    /// their pending challenges expiring now; returns those that were there.
    func delete(ids: [String], projectId: String, in work: UnitOfWork) async throws -> [String] {
        let now = clock.now()
        var deleted: [String] = []
        for id in ids where try await store.delete(id: id, projectId: projectId, now: now, in: work) {
            deleted.append(id)
        }
        return deleted
    }

    /// Revokes the project's enrollment tokens with these hashes in the caller's unit of work (a face's own tokens
    /// are deleted beside them), so none enrolls a device any more.
    func revokeEnrollmentTokens(hashes: [String], projectId: String, in work: UnitOfWork) async throws {
        for hash in hashes { try await store.deleteEnrollmentToken(hash: hash, projectId: projectId, in: work) }
    }

    /// How a device or its user proves an unverified factor outside an enrollment (Twilio's factor update).
    enum Proof: Sendable {
        /// Base64 of the factor key's DER ECDSA signature over `message` (how a Twilio SDK proves its key).
        case derSignature(String, over: Data)
        /// The factor's current TOTP code, `window` steps early or late.
        case totp(String, window: Int)
    }

    /// Verifies an unverified factor by `proof`, counted under the one lock-out (``attempt(_:_:)``), and marks it
    /// verified in one unit of work with the caller's `events`. A proof that is not a code at all is as wrong as a
    /// wrong one: `invalid_code`; `factor_locked` after too many. A factor verified meanwhile stays as it is.
    func verify(
        _ factor: FactorRecord, by proof: Proof, events: @Sendable (UnitOfWork) async throws -> Void
    ) async throws -> FactorRecord {
        let proven: Bool
        do {
            proven =
                switch proof {
                case .derSignature(let signature, let message):
                    try await attempt(factor) { Self.isDERSignature(signature, by: factor, over: message) }
                case .totp(let code, let window):
                    try await checkTOTP(code, factor: factor, window: window)
                }
        } catch let error as VerityError where error.code == .invalidCode {
            proven = false
        }
        guard proven else { throw VerityError(.invalidCode, "The proof does not verify this factor.") }
        let (store, now) = (store, clock.now())
        return try await store.unitOfWork { work in
            guard let verified = try await store.markVerified(id: factor.id, now: now, in: work) else { return factor }
            try await events(work)
            return verified
        }
    }

    // MARK: - Push enrollment (enrollment token)

    func enroll(_ request: CreatePushFactorRequest, enrollmentToken: String, dialect: FactorDialect = .verity)
        async throws -> EnrolledPushFactor
    {
        let now = clock.now()
        let tokenHash = SecretHash.hex(try Self.wellFormedEnrollmentToken(enrollmentToken))
        guard let token = try await store.enrollmentToken(hash: tokenHash, now: now) else {
            throw VerityError(.unauthorized, "The enrollment token is unknown or expired.")
        }
        let publicKey: P256.Signing.PublicKey
        do {
            publicKey = try P256.Signing.PublicKey(derBase64: request.publicKey)
        } catch {
            throw VerityError(
                .invalidPublicKey, "`publicKey` must be a P-256 public key: base64 of its DER SubjectPublicKeyInfo.")
        }
        let userVerificationKey = try request.userVerificationKey.map {
            try Self.validKey($0, field: "userVerificationKey")
        }
        // One key for both would let a silent signature pass for the owner's.
        guard userVerificationKey == nil || userVerificationKey != publicKey.derBase64 else {
            throw VerityError(.invalidPublicKey, "`userVerificationKey` must differ from `publicKey`.")
        }
        let name = try dialect.validFriendlyName(request.friendlyName)
        if request.pushPlatform != .none {
            guard let pushToken = request.pushToken else {
                throw VerityError(
                    .invalidRequest, "`\(dialect.name(.pushToken))` is required for \(request.pushPlatform.rawValue).")
            }
            try Self.requireValidPushToken(pushToken, dialect: dialect)
        }
        for (field, value) in [("appId", request.appId), ("sdkVersion", request.sdkVersion)] {
            if let value, value.unicodeScalars.count > 255 {
                throw VerityError(.invalidRequest, "`\(field)` is too long.")
            }
        }
        try request.metadata.map(Self.requireValidMetadata)
        let factor = FactorRecord(
            id: identifiers.make("fac"), projectId: token.projectId, userId: token.userId, type: .push,
            status: .unverified, friendlyName: name, publicKey: publicKey.derBase64,
            pushPlatform: request.pushPlatform, pushToken: request.pushPlatform == .none ? nil : request.pushToken,
            appId: request.appId, sdkVersion: request.sdkVersion,
            metadata: request.metadata?.isEmpty == false ? request.metadata : nil, nonce: identifiers.secret(bytes: 32),
            enrollmentTokenHash: tokenHash, createdAt: now, userVerificationKey: userVerificationKey,
            apnsEnvironment: request.pushPlatform == .apns ? request.apnsEnvironment : nil)
        guard try await store.insertEnrolledFactor(factor, tokenHash: tokenHash) else {
            throw VerityError(
                .conflict, "This enrollment token already enrolled a device; ask the backend for a new one.")
        }
        logger.info("Push factor enrolled", metadata: ["factor": "\(factor.id)", "project": "\(factor.projectId)"])
        return EnrolledPushFactor(factor: factor.response, nonce: factor.nonce ?? "")
    }

    /// Checks the device's signature over the enrollment nonce and marks the factor verified.
    func verifyPushFactor(id: String, signature: String, enrollmentToken: String) async throws -> Factor {
        let now = clock.now()
        let tokenHash = SecretHash.hex(try Self.wellFormedEnrollmentToken(enrollmentToken))
        guard let token = try await store.enrollmentToken(hash: tokenHash, now: now), token.factorId == id,
            let factor = try await store.factor(id: id), factor.enrollmentTokenHash == tokenHash
        else {
            throw VerityError(.unauthorized, "The enrollment token is unknown, expired or for another factor.")
        }
        guard factor.status == .unverified, let nonce = factor.nonce else {
            throw VerityError(.conflict, "The factor is already verified.")
        }
        let proof = try Self.verifiedPayload(signature, as: FactorProof.self, factor: factor)
        guard proof == FactorProof(factorId: factor.id, nonce: nonce) else {
            throw VerityError(.invalidSignature, "The signed payload must be this factor's id and nonce.")
        }
        guard let verified = try await store.markVerified(id: id, now: now) else {
            throw VerityError(.conflict, "The factor is already verified.")
        }
        return verified.response
    }

    // MARK: - Device requests (device JWT)

    /// Authenticates a device token: an ES256 JWS signed by a push factor's key, with a validity window of at most
    /// ``maxDeviceTokenLifetime`` that holds now (give or take ``leeway``). The two device protocols differ only in
    /// what `dialect` names; the checks are these, for both.
    func authenticateDevice(token: String, dialect: DeviceTokenDialect = .verity) async throws -> FactorRecord {
        let (factor, use) = try await checkDeviceToken(token, dialect: dialect)
        if let use { try await spend(use) }
        return factor
    }

    /// A device token's single use, not yet spent: the write the token authorizes spends it in its own transaction
    /// (``spend(_:in:)``), or it is spent alone (``spend(_:)``) when that write does not happen.
    struct DeviceTokenUse: Sendable {
        var factorId: String
        var jti: String
        var expiresAt: Date
    }

    /// ``authenticateDevice(token:dialect:)`` that leaves the token's use to be spent by the caller: nil for a
    /// dialect whose tokens are not single-use.
    func checkDeviceToken(_ token: String, dialect: DeviceTokenDialect = .verity) async throws
        -> (FactorRecord, DeviceTokenUse?)
    {
        let (factor, use, _) = try await checkDeviceToken(token, dialect: dialect) { [store] id in
            try await store.factor(id: id).map { ($0, ()) }
        }
        return (factor, use)
    }

    /// ``checkDeviceToken(_:dialect:)`` with the factor read by `read`, which may read what the request needs next
    /// in the same statement (an answer reads its challenge with it) and return it beside the factor.
    func checkDeviceToken<Companion: Sendable>(
        _ token: String, dialect: DeviceTokenDialect = .verity,
        reading read: (_ factorId: String) async throws -> (FactorRecord, Companion)?
    ) async throws -> (FactorRecord, DeviceTokenUse?, Companion) {
        guard let jws = try? CompactJWS(parsing: token) else {
            throw VerityError(.unauthorized, "The device token is not a valid ES256 JWS.")
        }
        guard dialect.contentType == nil || jws.header.cty == dialect.contentType,
            let keyID = jws.header.kid, let id = dialect.factorId(keyID),
            let (factor, companion) = try await read(id), factor.type == .push
        else { throw VerityError(.unauthorized, "The device token names no known push factor.") }
        let claims: DeviceTokenWindow
        do {
            claims = try Self.verifiedPayload(token, as: DeviceTokenWindow.self, factor: factor, parsed: jws)
        } catch {
            throw VerityError(.unauthorized, "The device token is not signed by this factor's key.")
        }
        let now = clock.now().timeIntervalSince1970
        guard let start = claims.iat ?? claims.nbf, claims.sub == dialect.subject(factor),
            claims.exp > now - Self.leeway, start <= now + Self.leeway, claims.exp > start,
            claims.exp - start <= Self.maxDeviceTokenLifetime
        else {
            throw VerityError(
                .unauthorized, "The device token is expired, not yet valid, too long-lived or for another factor.")
        }
        guard dialect.isSingleUse else { return (factor, nil, companion) }
        guard let jti = claims.jti, (8...128).contains(jti.count) else { throw Self.replayed }
        return (
            factor,
            DeviceTokenUse(
                factorId: factor.id, jti: jti, expiresAt: Date(timeIntervalSince1970: claims.exp + Self.leeway)),
            companion
        )
    }

    /// Spends a device token's use; throws `token_replayed` when it was spent before.
    func spend(_ use: DeviceTokenUse) async throws {
        guard try await store.spend(use)
        else { throw Self.replayed }
    }

    /// What a device request that failed with `error` answers, once its token's use is spent: the use counts even
    /// when the write it was for did not happen, and a token spent before is refused as `token_replayed`.
    func refusal(_ error: any Error, spending use: DeviceTokenUse?) async throws -> any Error {
        if let use { try await spend(use) }
        return error
    }

    /// What a device token spent before is refused with, whoever found it spent (``spend(_:)``, or an answer that
    /// spends its token with it).
    static let replayed = VerityError(.tokenReplayed, "Each device token may be used once; sign a new one.")

    /// The claims of a device token that bound it in time and to its factor, in either dialect.
    private struct DeviceTokenWindow: Decodable {
        var sub: String
        var iat: Double?
        var nbf: Double?
        var exp: Double
        var jti: String?
    }

    /// Forgets device-token ids past their expiry (they can no longer be replayed anyway) and enrollment tokens a
    /// day after theirs.
    func purgeSpentTokens() async throws {
        try await store.purgeExpired(before: clock.now())
    }

    /// Suspends factor `id` in `work` (a report of unusual activity); an earlier suspension stands.
    func suspend(id: String, in work: UnitOfWork) async throws {
        try await store.suspend(id: id, now: clock.now(), in: work)
    }

    /// Forgets a push token the platform declared dead, unless the device has sent a new one since.
    func forgetPushToken(_ token: String, of factorId: String) async throws {
        try await store.clearPushToken(id: factorId, token: token)
    }

    func update(_ factor: FactorRecord, with request: UpdateFactorRequest) async throws -> Factor {
        try await update(
            factor, pushToken: request.pushToken, friendlyName: request.friendlyName, metadata: request.metadata
        ).response
    }

    /// Changes a factor's device settings; nil leaves one as it is, and empty metadata removes it. A push token is
    /// kept only on a push factor.
    func update(
        _ factor: FactorRecord, pushToken: String?, friendlyName: String?, sdkVersion: String? = nil,
        appId: String? = nil, metadata: [String: String]? = nil, dialect: FactorDialect = .verity
    ) async throws -> FactorRecord {
        try pushToken.map { try Self.requireValidPushToken($0, dialect: dialect) }
        let name = try friendlyName.map { try dialect.validFriendlyName($0) }
        try metadata.map(Self.requireValidMetadata)
        guard
            let updated = try await store.update(
                id: factor.id, pushToken: factor.type == .push ? pushToken : nil, friendlyName: name,
                sdkVersion: sdkVersion, appId: appId, metadata: metadata)
        else { throw VerityError(.factorNotFound) }
        return updated
    }

    /// Adds or replaces the factor's user-verification key. The device token proved only the silent key, and whoever
    /// extracts that key must not pass for the owner, so the owner agrees too: `proof` signed by the current
    /// user-verification key (to replace it), or a fresh enrollment token the backend minted for the factor's user
    /// (spent here; it also adds a first key). A key given at enrollment needs neither.
    func setUserVerificationKey(_ factor: FactorRecord, _ request: SetUserVerificationKeyRequest) async throws -> Factor
    {
        let key = try Self.validKey(request.publicKey, field: "publicKey")
        guard key != factor.publicKey else {
            throw VerityError(.invalidPublicKey, "The user-verification key must differ from the device key.")
        }
        let tokenHash = request.enrollmentToken.map(SecretHash.hex)
        if tokenHash == nil {
            guard let current = factor.userVerificationKey, let proof = request.proof,
                Self.isProof(
                    proof, of: UserVerificationKeyProof(factorId: factor.id, publicKey: request.publicKey),
                    type: UserVerificationKeyProof.tokenType, by: try P256.Signing.PublicKey(derBase64: current))
            else {
                throw VerityError(
                    .userVerificationRequired,
                    "Setting the user-verification key needs the owner: a `proof` signed by the current "
                        + "user-verification key, or a fresh `enrollmentToken` from the backend.")
            }
        }
        switch try await store.setUserVerificationKey(
            key, of: factor, replacing: factor.userVerificationKey, spending: tokenHash, now: clock.now())
        {
        case .changed(let updated):
            logger.info("User-verification key set", metadata: ["factor": "\(factor.id)"])
            return updated.response
        case .tokenRefused:
            throw VerityError(
                .unauthorized, "The enrollment token is unknown, expired, used, or for another user.")
        case .keyChanged:
            throw VerityError(.conflict, "The factor's user-verification key changed meanwhile; try again.")
        }
    }

    /// Removes the factor's user-verification key: it then approves no `required` challenge.
    func removeUserVerificationKey(_ factor: FactorRecord) async throws -> Factor {
        guard let updated = try await store.setUserVerificationKey(nil, id: factor.id) else {
            throw VerityError(.factorNotFound)
        }
        logger.info("User-verification key removed", metadata: ["factor": "\(factor.id)"])
        return updated.response
    }

    /// Replaces the factor's proof-of-possession key: the device token proved the old key, `proof` (a JWS by the new
    /// key over a ``KeyRotationProof``) proves the new one.
    func rotateKey(_ factor: FactorRecord, _ request: RotateFactorKeyRequest) async throws -> Factor {
        let newKey = try Self.validKey(request.publicKey, field: "publicKey")
        guard let current = factor.publicKey, newKey != current, newKey != factor.userVerificationKey else {
            throw VerityError(
                .invalidPublicKey, "The new key must differ from the current one and from the user-verification key.")
        }
        guard
            Self.isProof(
                request.proof, of: KeyRotationProof(factorId: factor.id, publicKey: request.publicKey),
                type: KeyRotationProof.tokenType, by: try P256.Signing.PublicKey(derBase64: newKey))
        else {
            throw VerityError(
                .invalidSignature, "`proof` must be a KeyRotationProof for this factor and key, signed by the new key.")
        }
        guard let rotated = try await store.rotateKey(id: factor.id, from: current, to: newKey) else {
            throw VerityError(.conflict, "The factor's key changed meanwhile; sign with the current key.")
        }
        logger.info("Push factor key rotated", metadata: ["factor": "\(factor.id)"])
        return rotated.response
    }

    /// Whether `proof` is a compact JWS of `type` by `key` whose payload is `expected`.
    private static func isProof<Proof: Decodable & Equatable>(
        _ proof: String, of expected: Proof, type: String, by key: P256.Signing.PublicKey
    ) -> Bool {
        guard let jws = try? CompactJWS(parsing: proof), jws.header.typ == type,
            jws.isValidSignature(for: key), let signed = try? jws.decodePayload(Proof.self)
        else { return false }
        return signed == expected
    }

    /// A P-256 public key in base64 DER, normalised; `invalid_public_key` otherwise.
    private static func validKey(_ base64: String, field: String) throws -> String {
        guard base64.count <= 1024, let key = try? P256.Signing.PublicKey(derBase64: base64) else {
            throw VerityError(
                .invalidPublicKey, "`\(field)` must be a P-256 public key: base64 of its DER SubjectPublicKeyInfo.")
        }
        return key.derBase64
    }

    private static func requireValidMetadata(_ metadata: [String: String]) throws {
        guard FactorMetadata.isValid(metadata) else {
            throw VerityError(
                .invalidRequest,
                "`metadata` must be an object of strings with non-empty keys, at most \(FactorMetadata.maxLength) "
                    + "characters as JSON.")
        }
    }

    // MARK: - TOTP

    /// The time steps a TOTP factor may have, in seconds.
    static let totpTimeSteps = 20...60

    /// - Parameters:
    ///   - period: The time step in seconds (Twilio's services choose 20 to 60).
    ///   - secret: The shared secret, when the caller brings one; otherwise a random one of the algorithm's size.
    ///   - dialect: The protocol whose user ids and field names the request speaks of.
    func createTOTPFactor(
        userId: String, _ request: CreateTOTPFactorRequest, in project: Project, period: Int = 30,
        secret given: [UInt8]? = nil, dialect: FactorDialect = .verity
    ) async throws -> CreatedTOTPFactor {
        let userId = try dialect.validUserId(userId)
        let name = try dialect.validFriendlyName(request.friendlyName)
        guard let algorithm = TOTP.Algorithm(rawValue: (request.algorithm ?? "SHA1").uppercased()) else {
            throw VerityError(.invalidRequest, "`algorithm` must be SHA1, SHA256 or SHA512.")
        }
        let digits = request.digits ?? 6
        guard (6...8).contains(digits) else {
            throw VerityError(.invalidRequest, "`\(dialect.name(.digits))` must be 6, 7 or 8.")
        }
        let issuer = request.issuer ?? project.name
        guard (1...100).contains(issuer.unicodeScalars.count) else {
            throw VerityError(.invalidRequest, "`issuer` must be 1 to 100 characters.")
        }
        _ = try dialect.value(period, of: .period, within: Self.totpTimeSteps, unit: "seconds")
        if let given, !(10...64).contains(given.count) {
            throw VerityError(.invalidRequest, "The secret must be 10 to 64 bytes.")
        }
        let secret =
            given ?? identifiers.random.bytes(count: algorithm == .sha1 ? 20 : algorithm == .sha256 ? 32 : 64)
        let totp = try TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period)
        let id = identifiers.make("fac")
        let factor = FactorRecord(
            id: id, projectId: project.id, userId: userId, type: .totp, status: .unverified, friendlyName: name,
            totpSecret: try sealer.seal(secret, context: id), totpAlgorithm: algorithm.rawValue, totpDigits: digits,
            totpPeriod: period, createdAt: clock.now())
        try await store.insert(factor)
        return CreatedTOTPFactor(
            factor: factor.response, secret: Base32.encode(secret), uri: totp.uri(issuer: issuer, account: userId))
    }

    /// Checks a TOTP code (± `window` steps) and spends its time step, so the same code never works twice; counted
    /// as an ``attempt(_:_:)``.
    func checkTOTP(_ code: String, factor: FactorRecord, window: Int = 1) async throws -> Bool {
        guard code.count <= 8, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw VerityError(.invalidCode, "The code must be 6 to 8 digits.")
        }
        guard let sealed = factor.totpSecret, let algorithm = factor.totpAlgorithm.flatMap(TOTP.Algorithm.init),
            let digits = factor.totpDigits, let period = factor.totpPeriod
        else { throw StoreError.corruptValue(column: "factors.totp_secret") }
        let totp = try TOTP(
            secret: try sealer.open(sealed, context: factor.id), algorithm: algorithm, digits: digits, period: period)
        return try await attempt(factor) {
            guard let counter = totp.matchingCounter(for: code, at: clock.now(), window: window) else { return false }
            return try await store.useTOTPCounter(id: factor.id, counter: Int64(counter))
        }
    }

    /// One check of a factor's code or proof (`check` says whether it is right), under the one lock-out every face
    /// shares: ``maxFailedAttempts`` wrong ones in a row lock the factor, and the last of them, like every attempt
    /// while the lock lasts (see ``lockout``), throws `factor_locked` without checking anything.
    func attempt(_ factor: FactorRecord, _ check: () async throws -> Bool) async throws -> Bool {
        let now = clock.now()
        guard
            let run = try await store.takeAttempt(
                id: factor.id, limit: Self.maxFailedAttempts, unlockBefore: now.addingTimeInterval(-Self.lockout),
                now: now)
        else { throw Self.locked }
        if try await check() {
            try await store.clearAttempts(id: factor.id)
            return true
        }
        if run >= Self.maxFailedAttempts {
            logger.notice("Factor locked after wrong codes", metadata: ["factor": "\(factor.id)"])
            throw Self.locked
        }
        return false
    }

    /// Whether `code` is the current code of one of the user's verified TOTP factors, spending that factor's time
    /// step.
    func checkTOTP(_ code: String, userId: String, in project: Project) async throws -> Bool {
        for factor in try await store.factors(userId: try Self.validUserId(userId), projectId: project.id)
        where factor.type == .totp && factor.status == .verified {
            do {
                if try await checkTOTP(code, factor: factor) { return true }
            } catch let error as VerityError where error.code == .factorLocked {
                continue  // a locked factor passes no code; the others may
            }
        }
        return false
    }

    func verifyTOTPFactor(id: String, code: String, in project: Project) async throws -> Factor {
        let factor = try await factor(id: id, in: project)
        guard factor.type == .totp else {
            throw VerityError(.invalidRequest, "Push factors are verified by their device, not with a code.")
        }
        guard factor.status == .unverified else { throw VerityError(.conflict, "The factor is already verified.") }
        guard try await checkTOTP(code, factor: factor) else {
            throw VerityError(.invalidCode, "The code is wrong or was already used; wait for the next one.")
        }
        guard let verified = try await store.markVerified(id: id, now: clock.now()) else {
            throw VerityError(.conflict, "The factor is already verified.")
        }
        return verified.response
    }

    // MARK: - Validation

    /// `token` if it has an enrollment token's shape (`vet_…`, at most 100 characters); `unauthorized` otherwise, so
    /// that nothing else a caller sends is hashed and looked up.
    static func wellFormedEnrollmentToken(_ token: String?) throws -> String {
        guard let token, OperatorService.isWellFormed(token, prefix: enrollmentTokenPrefix) else {
            throw VerityError(.unauthorized, "Send the enrollment token as `Authorization: Bearer vet_…`.")
        }
        return token
    }

    static func validUserId(_ userId: String) throws -> String {
        try FactorDialect.verity.validUserId(userId)
    }

    private static func requireValidPushToken(_ token: String, dialect: FactorDialect) throws {
        guard (1...4096).contains(token.unicodeScalars.count) else {
            throw VerityError(.invalidRequest, "`\(dialect.name(.pushToken))` must be 1 to 4096 characters.")
        }
    }

    /// Whether `base64` is base64 of the factor key's DER ECDSA signature over `message` (how a Twilio SDK proves
    /// its key when it verifies a factor).
    private static func isDERSignature(_ base64: String, by factor: FactorRecord, over message: Data) -> Bool {
        guard base64.count <= 512, let der = Data(base64Encoded: base64),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der),
            let key = try? factor.signingKey()
        else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// Verifies a compact JWS with the factor's key and decodes its payload.
    static func verifiedPayload<T: Decodable>(
        _ token: String, as type: T.Type, factor: FactorRecord, parsed: CompactJWS? = nil
    ) throws -> T {
        let key = try factor.signingKey()
        guard let jws = try? parsed ?? CompactJWS(parsing: token), jws.isValidSignature(for: key) else {
            throw VerityError(.invalidSignature, "The signature does not verify with this factor's key.")
        }
        do {
            return try jws.decodePayload(T.self)
        } catch {
            throw VerityError(.invalidSignature, "The signed payload does not have the expected fields.")
        }
    }
}
