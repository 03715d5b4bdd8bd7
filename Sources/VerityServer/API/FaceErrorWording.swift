import Hummingbird
import Logging

/// How a face words its errors: problem+json for the native API, Twilio's `{code, message, more_info, status}`,
/// Google's `{"error": {…}}` for the Firebase face.
protocol FaceErrorWording: Sendable {
    /// The face's answer for an error it knows (a Domain refusal, a Hummingbird HTTP error, its own error type), or
    /// nil for an unexpected one.
    func response(for error: any Error, to request: Request) -> Response?
    /// The face's 500, which says nothing about internals.
    func internalError(to request: Request) -> Response
}
