import Foundation

/// A started possession check: the backend keeps `correlationId`, the app gets `authToken`.
public struct StartedPossession: Codable, Sendable, Equatable {
    /// The flow (`pos_…`); the backend validates it when the app says it finished.
    public var correlationId: String
    /// The one credential the app needs to run this one flow: `vpt_`, the correlation id, `.` and a secret. It dies
    /// with the flow.
    public var authToken: String

    /// The correlation id an auth token names, or nil when it is not one.
    public static func correlationId(inAuthToken token: String) -> String? {
        guard token.hasPrefix("vpt_pos_"), let dot = token.firstIndex(of: ".") else { return nil }
        return String(token[token.index(token.startIndex, offsetBy: 4)..<dot])
    }
    public var flow: PossessionFlowType
    public var expiresAt: Date
    /// When the project has the carrier check on: the operator's authorization URL for the app to open over mobile
    /// data (not Wi-Fi), following redirects back to Verity. Single use; without it, or when it fails, use a code.
    public var carrierAuthorizationUrl: String?

    public init(
        correlationId: String, authToken: String, flow: PossessionFlowType, expiresAt: Date,
        carrierAuthorizationUrl: String? = nil
    ) {
        self.correlationId = correlationId
        self.authToken = authToken
        self.flow = flow
        self.expiresAt = expiresAt
        self.carrierAuthorizationUrl = carrierAuthorizationUrl
    }
}
