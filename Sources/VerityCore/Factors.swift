import Foundation

/// `POST /v1/enrollment-tokens` (API key): lets one app install enroll a push factor for one user.
public struct CreateEnrollmentTokenRequest: Codable, Sendable {
    /// The customer's own identifier for the user (1–128 characters), or a Verity `usr_` id.
    public var userId: String
    /// Seconds the token stays valid (60–3600, default 600).
    public var expiresIn: Int?

    public init(userId: String, expiresIn: Int? = nil) {
        self.userId = userId
        self.expiresIn = expiresIn
    }
}

/// A short-lived, single-user enrollment token, handed to the app.
public struct EnrollmentToken: Codable, Sendable, Equatable {
    public var token: String
    public var userId: String
    public var expiresAt: Date

    public init(token: String, userId: String, expiresAt: Date) {
        self.token = token
        self.userId = userId
        self.expiresAt = expiresAt
    }
}

/// How push notifications reach a device.
public enum PushPlatform: String, WireEnum, Sendable {
    case apns
    case fcm
    /// The app pulls pending challenges instead.
    case none
}

/// What kind of second factor.
public enum FactorType: String, WireEnum, Sendable {
    /// A device key answering push challenges.
    case push
    /// An authenticator app (RFC 6238).
    case totp
}

/// A factor is usable only once it proved possession of its key or secret.
public enum FactorStatus: String, WireEnum, Sendable {
    case unverified
    case verified
}

/// Which APNs servers a device token belongs to: an app built for development gets sandbox tokens, an App Store or
/// TestFlight build production ones.
public enum APNsEnvironment: String, WireEnum, Sendable {
    /// `api.push.apple.com`.
    case production
    /// `api.sandbox.push.apple.com`.
    case sandbox
}

/// `POST /v1/device/factors` (enrollment token): register a device key.
public struct CreatePushFactorRequest: Codable, Sendable {
    /// The P-256 public key, base64 of its DER SubjectPublicKeyInfo.
    public var publicKey: String
    public var friendlyName: String
    public var pushPlatform: PushPlatform
    public var pushToken: String?
    public var appId: String?
    public var sdkVersion: String?
    /// The app's own data about the factor, which its backend reads with the factor; string values, at most
    /// ``FactorMetadata/maxLength`` characters as JSON.
    public var metadata: [String: String]?
    /// An optional second P-256 public key whose use needs the owner (base64 DER SubjectPublicKeyInfo): the only
    /// key that approves a challenge with `userVerification: required`.
    public var userVerificationKey: String?
    /// For `apns`, the APNs environment of `pushToken`; the server's configured environment when absent.
    public var apnsEnvironment: APNsEnvironment?

    public init(
        publicKey: String, friendlyName: String, pushPlatform: PushPlatform, pushToken: String? = nil,
        appId: String? = nil, sdkVersion: String? = nil, metadata: [String: String]? = nil,
        userVerificationKey: String? = nil, apnsEnvironment: APNsEnvironment? = nil
    ) {
        self.userVerificationKey = userVerificationKey
        self.apnsEnvironment = apnsEnvironment
        self.publicKey = publicKey
        self.friendlyName = friendlyName
        self.pushPlatform = pushPlatform
        self.pushToken = pushToken
        self.appId = appId
        self.sdkVersion = sdkVersion
        self.metadata = metadata
    }
}

/// The bound on a factor's app metadata, the same on every face (Twilio's `Metadata` has it too).
public enum FactorMetadata {
    /// The most characters the metadata may take as a JSON object.
    public static let maxLength = 1024

    /// Whether `metadata` fits: non-empty keys, and at most ``maxLength`` characters as compact JSON.
    public static func isValid(_ metadata: [String: String]) -> Bool {
        guard !metadata.keys.contains(""), let json = try? JSONEncoder().encode(metadata) else { return false }
        return json.count <= maxLength
    }
}

/// A factor as the API shows it. Secrets and push tokens are never returned.
public struct Factor: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    public var type: FactorType
    public var status: FactorStatus
    public var friendlyName: String
    public var pushPlatform: PushPlatform?
    public var appId: String?
    public var sdkVersion: String?
    /// The app's metadata, when it gave any.
    public var metadata: [String: String]?
    public var createdAt: Date
    public var verifiedAt: Date?
    /// For a push factor: whether it has a user-verification key, so can approve a `required` challenge.
    public var hasUserVerificationKey: Bool?
    /// When the factor was suspended after its owner reported unusual activity; it then answers nothing.
    public var suspendedAt: Date?

    public init(
        id: String, userId: String, type: FactorType, status: FactorStatus, friendlyName: String,
        pushPlatform: PushPlatform? = nil, appId: String? = nil, sdkVersion: String? = nil,
        metadata: [String: String]? = nil, createdAt: Date, verifiedAt: Date? = nil,
        hasUserVerificationKey: Bool? = nil, suspendedAt: Date? = nil
    ) {
        self.hasUserVerificationKey = hasUserVerificationKey
        self.suspendedAt = suspendedAt
        self.id = id
        self.userId = userId
        self.type = type
        self.status = status
        self.friendlyName = friendlyName
        self.pushPlatform = pushPlatform
        self.appId = appId
        self.sdkVersion = sdkVersion
        self.metadata = metadata
        self.createdAt = createdAt
        self.verifiedAt = verifiedAt
    }
}

/// The answer to enrolling a push factor: the factor, and the nonce the device signs to prove it holds the key.
public struct EnrolledPushFactor: Codable, Sendable, Equatable {
    public var factor: Factor
    /// Sign ``FactorProof`` with this nonce and send it to `POST /v1/device/factors/{id}/verify`.
    public var nonce: String

    public init(factor: Factor, nonce: String) {
        self.factor = factor
        self.nonce = nonce
    }
}

/// The JSON payload of the compact JWS that proves key possession at enrollment.
public struct FactorProof: Codable, Sendable, Equatable {
    public var factorId: String
    public var nonce: String

    public init(factorId: String, nonce: String) {
        self.factorId = factorId
        self.nonce = nonce
    }
}

/// `POST /v1/device/factors/{id}/verify`: `signature` is a compact ES256 JWS over a ``FactorProof``.
public struct VerifyPushFactorRequest: Codable, Sendable {
    public var signature: String

    public init(signature: String) {
        self.signature = signature
    }
}

/// `PATCH /v1/device/factors/{id}` (device JWT): a new push token, name or metadata.
public struct UpdateFactorRequest: Codable, Sendable {
    public var pushToken: String?
    public var friendlyName: String?
    /// Replaces the app's metadata as a whole (`{}` removes it).
    public var metadata: [String: String]?

    public init(pushToken: String? = nil, friendlyName: String? = nil, metadata: [String: String]? = nil) {
        self.pushToken = pushToken
        self.friendlyName = friendlyName
        self.metadata = metadata
    }
}

/// `POST /v1/users/{userId}/factors/totp` (API key).
public struct CreateTOTPFactorRequest: Codable, Sendable {
    public var friendlyName: String
    /// `SHA1` (default), `SHA256` or `SHA512`.
    public var algorithm: String?
    /// 6 (default) to 8.
    public var digits: Int?
    /// Used as the issuer in the `otpauth://` URI; defaults to the project's name.
    public var issuer: String?

    public init(friendlyName: String, algorithm: String? = nil, digits: Int? = nil, issuer: String? = nil) {
        self.friendlyName = friendlyName
        self.algorithm = algorithm
        self.digits = digits
        self.issuer = issuer
    }
}

/// A new TOTP factor: the secret is shown this once, for the authenticator app.
public struct CreatedTOTPFactor: Codable, Sendable, Equatable {
    public var factor: Factor
    /// Base32 (RFC 4648), what authenticator apps call the key.
    public var secret: String
    /// `otpauth://totp/…`, usually shown as a QR code.
    public var uri: String

    public init(factor: Factor, secret: String, uri: String) {
        self.factor = factor
        self.secret = secret
        self.uri = uri
    }
}

/// `POST /v1/factors/{id}/verify` (API key): the first code from the authenticator app.
public struct VerifyTOTPFactorRequest: Codable, Sendable {
    public var code: String

    public init(code: String) {
        self.code = code
    }
}
