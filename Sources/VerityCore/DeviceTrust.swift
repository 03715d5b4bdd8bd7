import Foundation

/// Which of a push factor's two keys signed an answer.
///
/// Every push factor has a silent proof-of-possession key, used without asking the owner. It may also have a
/// user-verification key, whose use needs the owner (on Apple platforms a Secure Enclave key with biometry or
/// passcode access control). A challenge whose ``UserVerification`` is `required` is approved only by the latter.
public enum FactorKeyType: String, WireEnum, Sendable {
    /// The silent key the factor enrolled with; it also signs every device token.
    case proofOfPossession
    /// The key whose use needs the owner's face, fingerprint or passcode.
    case userVerification
}

/// How the owner proved their presence before the user-verification key signed (the answer's `amr`, as in RFC 8176).
public enum UserVerificationMethod: String, WireEnum, Sendable {
    /// Face recognition (Face ID).
    case face
    /// A fingerprint (Touch ID).
    case fpt = "fpt"
    /// The device passcode.
    case pin
    /// An iris scan (Optic ID).
    case iris
}

/// What happened when the device asked its owner to verify, reported (and signed) with the answer.
public enum UserVerificationResult: String, WireEnum, Sendable {
    /// The owner verified; the user-verification key signed.
    case verified
    /// The owner cancelled the prompt.
    case cancelled
    /// The owner tried and was not recognised.
    case failed
    /// The device cannot verify its owner now (no biometry enrolled, locked out, no user-verification key).
    case unavailable
}

/// Why the owner denied a challenge, when they said: a signed report of unusual activity.
public enum DenyReason: String, WireEnum, Sendable {
    /// "This wasn't me": the owner did not start what the challenge asks about.
    case notMe = "not_me"
    /// The owner finds the request suspicious (an unknown place or app).
    case suspicious
}

/// What a project does when a device reports unusual activity (a deny with a ``DenyReason``).
public enum UnusualActivityResponse: String, WireEnum, Sendable {
    /// Record the security event and send the webhook, nothing more.
    case none
    /// Also revoke every session of the user (only for a Verity user, `usr_…`).
    case revokeSessions = "revoke_sessions"
    /// Also suspend the factor that reported: it answers nothing more until the backend enrolls a new one.
    case suspendFactor = "suspend_factor"
    /// Also disable the user, which revokes their sessions (only for a Verity user, `usr_…`).
    case disableUser = "disable_user"
}

/// The context a device shows with a challenge: where and when the request was made, and from which app. It is part
/// of what the device signs (see ``ChallengeSigningPayload/displayedContentHash(message:details:context:)``), so nothing the
/// phone shows can be changed on the way without the answer being refused.
public struct ChallengeContext: Codable, Sendable, Equatable {
    /// Where the request comes from, as the backend describes it ("Berlin, Germany").
    public var location: String?
    /// The client that made the request ("Safari on macOS").
    public var client: String?
    /// The app or site the user is signing in to.
    public var app: String?
    /// When the request was made; the server sets it to the challenge's creation, to the second.
    public var time: Date?
    /// More lines of text the backend wants shown, in order.
    public var textItems: [String]?

    /// Creates a context.
    public init(
        location: String? = nil, client: String? = nil, app: String? = nil, time: Date? = nil,
        textItems: [String]? = nil
    ) {
        self.location = location
        self.client = client
        self.app = app
        self.time = time
        self.textItems = textItems
    }
}

/// `PUT /v1/device/factors/{id}/user-verification-key` (device token, so signed by the proof-of-possession key): adds
/// or replaces the factor's user-verification key.
public struct SetUserVerificationKeyRequest: Codable, Sendable {
    /// The P-256 public key, base64 of its DER SubjectPublicKeyInfo.
    public var publicKey: String
    /// To replace a key the factor has: a compact JWS (`typ` ``UserVerificationKeyProof/tokenType``) by the
    /// **current** user-verification key over a ``UserVerificationKeyProof`` for the new one.
    public var proof: String?
    /// Instead of `proof`, and to add a first key: a fresh enrollment token (`vet_…`) the backend minted for the
    /// factor's user; this request spends it.
    public var enrollmentToken: String?

    public init(publicKey: String, proof: String? = nil, enrollmentToken: String? = nil) {
        self.publicKey = publicKey
        self.proof = proof
        self.enrollmentToken = enrollmentToken
    }
}

/// What the current user-verification key signs when a new one replaces it: the owner, not only whoever holds the
/// silent key, agrees to the change.
public struct UserVerificationKeyProof: Codable, Sendable, Equatable {
    /// The `typ` header of the proof.
    public static let tokenType = "verity-uv-key+jws"
    /// The factor whose user-verification key is replaced.
    public var factorId: String
    /// The new key, exactly as in ``SetUserVerificationKeyRequest/publicKey``.
    public var publicKey: String

    public init(factorId: String, publicKey: String) {
        self.factorId = factorId
        self.publicKey = publicKey
    }
}

/// `POST /v1/device/factors/{id}/rotate-key` (device token signed by the current proof-of-possession key): replaces
/// that key. `proof` is a compact ES256 JWS by the **new** key over a ``KeyRotationProof``.
public struct RotateFactorKeyRequest: Codable, Sendable {
    /// The new P-256 public key, base64 of its DER SubjectPublicKeyInfo.
    public var publicKey: String
    /// A compact JWS (`typ` ``KeyRotationProof/tokenType``) signed by the new key.
    public var proof: String

    public init(publicKey: String, proof: String) {
        self.publicKey = publicKey
        self.proof = proof
    }
}

/// What a new proof-of-possession key signs when it replaces the old one.
public struct KeyRotationProof: Codable, Sendable, Equatable {
    /// The `typ` header of the proof.
    public static let tokenType = "verity-key-rotation+jws"
    /// The factor whose key is replaced.
    public var factorId: String
    /// The new key, exactly as in ``RotateFactorKeyRequest/publicKey``.
    public var publicKey: String

    public init(factorId: String, publicKey: String) {
        self.factorId = factorId
        self.publicKey = publicKey
    }
}

/// `PATCH /v1/project` (API key): the project's device-trust settings.
public struct UpdateProjectRequest: Codable, Sendable {
    /// What the project does when a device reports unusual activity.
    public var unusualActivityResponse: UnusualActivityResponse?

    public init(unusualActivityResponse: UnusualActivityResponse? = nil) {
        self.unusualActivityResponse = unusualActivityResponse
    }
}

/// `GET`/`PATCH /v1/project`: the project as its backend sees it.
public struct ProjectSummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// What the project does when a device reports unusual activity.
    public var unusualActivityResponse: UnusualActivityResponse

    public init(id: String, name: String, unusualActivityResponse: UnusualActivityResponse) {
        self.id = id
        self.name = name
        self.unusualActivityResponse = unusualActivityResponse
    }
}

/// The security event a device's report of unusual activity produces, as listed by `GET /v1/security-events` and sent
/// to the project's webhook as `security.unusual_activity_reported`.
public enum UnusualActivity {
    /// The ``SecurityEvent/type``.
    public static let eventType = "unusual_activity_reported"
}
