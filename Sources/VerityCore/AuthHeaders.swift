import Foundation

/// The header that names the project on the app-facing `/v1/auth/…` endpoints (its public id, `prj_…`).
public enum AuthHeaders {
    public static let project = "X-Verity-Project"
    /// The proof that the request comes from the project's app (``AppVerificationPush/proof(id:secret:)``), on
    /// requests that send a code when the project requires app verification.
    public static let appVerification = "X-Verity-App-Verification"
}
