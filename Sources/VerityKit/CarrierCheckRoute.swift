import Foundation

/// The carrier check's wire protocol, in one place: the server side is written apart from this client, so every
/// path and field is named here for the two to be aligned.
///
/// The app asks the flow to start a carrier check; the server answers the operator's front-channel authorization
/// URL (CAMARA Number Verification, OAuth 2.0 authorization code). The app opens it over mobile data and follows the
/// redirects until the server's own callback answers; the server then completes the code exchange and asks the
/// operator whether the device's number is the flow's. Reading the flow shows `succeeded` when it was; otherwise the
/// flow is as before (`created`), and the app sends the code as usual.
enum CarrierCheckRoute {
    /// `POST`, below the flow (`v1/possession/{correlationId}`), with the flow's token: answered `200` with
    /// ``Started``; a project without a carrier check refuses it.
    static let start = "/carrier/start"

    /// The server's answer to ``start``.
    struct Started: Decodable, Sendable {
        /// The operator's authorization URL, to open over mobile data.
        let authorizationUrl: URL
    }
}
