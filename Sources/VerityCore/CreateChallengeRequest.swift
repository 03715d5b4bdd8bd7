import Foundation

/// `POST /v1/challenges` (API key). Name a `factorId`, or a `userId` to reach all the user's push factors
/// (the first answer wins). For a TOTP factor send `code`; the answer is immediate.
public struct CreateChallengeRequest: Codable, Sendable {
    public var factorId: String?
    public var userId: String?
    public var message: String?
    public var details: [ChallengeDetail]?
    /// Data kept with the challenge for the backend, never shown on the device.
    public var hiddenDetails: [String: String]?
    /// Seconds until the challenge expires (10–3600, default 300).
    public var expiresIn: Int?
    public var userVerification: UserVerification?
    /// The TOTP code, for a TOTP factor.
    public var code: String?
    /// Where, from which client and app the request comes, and more lines to show; the device signs it with the
    /// message and details. The server sets its `time`.
    public var context: ChallengeContext?

    public init(
        factorId: String? = nil, userId: String? = nil, message: String? = nil, details: [ChallengeDetail]? = nil,
        hiddenDetails: [String: String]? = nil, expiresIn: Int? = nil, userVerification: UserVerification? = nil,
        code: String? = nil, context: ChallengeContext? = nil
    ) {
        self.context = context
        self.factorId = factorId
        self.userId = userId
        self.message = message
        self.details = details
        self.hiddenDetails = hiddenDetails
        self.expiresIn = expiresIn
        self.userVerification = userVerification
        self.code = code
    }
}
