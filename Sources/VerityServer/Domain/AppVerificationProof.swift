/// How a request proved it comes from the project's real app, when app verification asked: recorded on the code it
/// admitted (`verifications.app_proof`) and counted in `verity_app_verification_proofs_total{project, proof}`.
enum AppVerificationProof: String, Sendable, CaseIterable {
    /// The app sent back the secret a silent push carried (``AppVerificationService``).
    case silentPush = "silent_push"
    /// An App Attest assertion of the project's app (``AppAttestService``).
    case appAttest = "app_attest"
}
