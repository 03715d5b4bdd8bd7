import Foundation

/// `POST /v1/factors/{id}/verify` (API key): the first code from the authenticator app.
public struct VerifyTOTPFactorRequest: Codable, Sendable {
    public var code: String

    public init(code: String) {
        self.code = code
    }
}
