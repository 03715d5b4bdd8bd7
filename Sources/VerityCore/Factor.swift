import Foundation

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
