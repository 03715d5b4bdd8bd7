import Foundation

/// What the silent push carries and what the app sends back.
public enum AppVerificationPush {
    /// The value of the push's `type` key.
    public static let type = "verity.app_verification"
    /// The key of the verification's id in the push.
    public static let idKey = "appVerificationId"
    /// The key of the secret in the push.
    public static let secretKey = "secret"

    /// The ``AuthHeaders/appVerification`` value that proves receipt: `<id>.<secret>`.
    public static func proof(id: String, secret: String) -> String {
        "\(id).\(secret)"
    }
}
