/// An RFC 9457 problem document (`application/problem+json`) as Verity sends it.
public struct Problem: Codable, Sendable, Equatable, Error {
    /// A URI naming the problem type; Verity uses `urn:verity:error:<code>`.
    public var type: String
    public var title: String
    public var status: Int
    /// The stable, machine-readable error code.
    public var code: String
    /// What went wrong in this instance, for people.
    public var detail: String?
    /// Wrong codes still allowed before the code is dead (`wrong_code` only).
    public var remainingAttempts: Int?

    public init(code: ErrorCode, detail: String? = nil) {
        self.type = "urn:verity:error:\(code.rawValue)"
        self.title = code.title
        self.status = code.httpStatus
        self.code = code.rawValue
        self.detail = detail
    }

    /// The code as a known ``ErrorCode``, or `nil` when a newer server sent one this client does not know.
    public var errorCode: ErrorCode? { ErrorCode(rawValue: code) }
}
