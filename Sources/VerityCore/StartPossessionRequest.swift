import Foundation

/// `POST /v1/possession` (API key).
public struct StartPossessionRequest: Codable, Sendable, Equatable {
    /// The E.164 number to prove; may be left out for a mobile flow, and the app then supplies it.
    public var phoneNumber: String?
    public var flow: PossessionFlowType
    /// Where the hosted instant-link page sends the user after confirming (desktop), `https://` (or `http://`).
    public var finalTargetUrl: String?
    /// A BCP 47 language tag for the messages and the hosted page.
    public var locale: String?
    /// Whether the app may run this flow on one of the project's test numbers when `phoneNumber` is left out (a test
    /// number is never sent to, and on desktop its link counts as opened at once). Off by default: a number the
    /// backend names itself is a test-number flow whenever it is one.
    public var allowTestNumbers: Bool?

    public init(
        phoneNumber: String? = nil, flow: PossessionFlowType, finalTargetUrl: String? = nil, locale: String? = nil,
        allowTestNumbers: Bool? = nil
    ) {
        self.phoneNumber = phoneNumber
        self.flow = flow
        self.finalTargetUrl = finalTargetUrl
        self.locale = locale
        self.allowTestNumbers = allowTestNumbers
    }
}
