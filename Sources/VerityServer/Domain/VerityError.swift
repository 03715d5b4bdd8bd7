import VerityCore

/// The one error type of the server: a stable code from the catalogue, plus what went wrong this time.
/// The API renders it as `application/problem+json`.
public struct VerityError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var detail: String?
    /// Seconds a client should wait before trying again (sent as `Retry-After`).
    public var retryAfter: Int?
    /// Wrong codes still allowed (`wrong_code`), sent as the problem's `remainingAttempts`.
    public var remainingAttempts: Int?

    public init(_ code: ErrorCode, _ detail: String? = nil, retryAfter: Int? = nil, remainingAttempts: Int? = nil) {
        self.code = code
        self.detail = detail
        self.retryAfter = retryAfter
        self.remainingAttempts = remainingAttempts
    }
}
