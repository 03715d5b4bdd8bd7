/// A project's WebAuthn relying-party settings: who the credentials are scoped to, which pages and apps may use
/// them, and what the project asks of authenticators.
public struct PasskeySettings: Sendable, Equatable, Codable {
    /// A WebAuthn requirement level (`discouraged`, `preferred`, `required`), for resident keys and user verification.
    public enum Requirement: String, Sendable, Codable, CaseIterable {
        case discouraged, preferred, required
    }

    /// Where the authenticator may live: on the device (`platform`) or roaming (`cross-platform`).
    public enum Attachment: String, Sendable, Codable, CaseIterable {
        case platform
        case crossPlatform = "cross-platform"
    }

    /// What the project asks to learn about the authenticator: nothing (`none`) or a verified `packed` attestation
    /// statement (`direct`).
    public enum Attestation: String, Sendable, Codable, CaseIterable {
        case none, direct
    }

    /// The relying-party id: a registrable domain the origins belong to (`example.com`).
    public var rpID: String
    /// The name authenticators show.
    public var rpName: String
    /// The origins a ceremony may come from: `https://` web origins, and `android:apk-key-hash:` origins for apps.
    public var origins: [String]
    /// The attachment asked for; nil lets the user choose.
    public var attachment: Attachment? = nil
    /// Whether the credential must be discoverable (sign-in without a login id needs one).
    public var residentKey: Requirement = .preferred
    /// Whether the authenticator must verify the user; `required` refuses an answer without the UV flag.
    public var userVerification: Requirement = .preferred
    /// The attestation asked for at registration.
    public var attestation: Attestation = .none
    /// How long a challenge may be answered, in seconds (30 s to 10 min).
    public var challengeLifetime: Int = 300

    /// The allowed range of ``challengeLifetime``.
    public static let challengeLifetimeRange = 30...600

    /// Settings for the relying party `rpID`, named `rpName`, used from `origins`.
    public init(rpID: String, rpName: String, origins: [String]) {
        self.rpID = rpID
        self.rpName = rpName
        self.origins = origins
    }
}
