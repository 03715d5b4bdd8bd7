import Foundation

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
