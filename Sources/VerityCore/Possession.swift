import Foundation

/// How a possession check reaches the phone: a code typed into the app on the phone itself (`mobile`), or an
/// instant link tapped on the phone while the user waits on a desktop (`desktop`).
public enum PossessionFlowType: String, WireEnum, Sendable {
    case mobile
    case desktop
}

/// Where a possession check stands.
public enum PossessionStatus: String, WireEnum, Sendable {
    /// Started by the backend; nothing sent yet.
    case created
    /// A code went out and waits to be entered.
    case otpSent = "otp_sent"
    /// The last code entered was wrong; `otp/retry` allows another entry.
    case otpWrong = "otp_wrong"
    /// An instant link went out and waits to be opened and confirmed.
    case linkSent = "link_sent"
    /// Possession proven.
    case succeeded
    /// Ended without proof (too many wrong codes).
    case failed
    /// The flow's 15 minutes (project setting) ran out before it succeeded.
    case expired
}

/// How possession was proven.
public enum PossessionMethod: String, WireEnum, Sendable {
    case otp
    case instantLink = "instant_link"
    /// A carrier-based check (a silent-possession provider configured on the server).
    case silent
}

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

    public init(correlationId: String, authToken: String, flow: PossessionFlowType, expiresAt: Date) {
        self.correlationId = correlationId
        self.authToken = authToken
        self.flow = flow
        self.expiresAt = expiresAt
    }
}

/// The app's view of a flow: what it may do next.
public struct PossessionState: Codable, Sendable, Equatable {
    public var correlationId: String
    public var flow: PossessionFlowType
    public var status: PossessionStatus
    /// The number being proven, masked; absent until there is one.
    public var maskedPhoneNumber: String?
    /// Whether the app must supply the phone number (to `otp/start` or `link/start`).
    public var phoneNumberNeeded: Bool
    public var resendsLeft: Int
    public var retriesLeft: Int
    public var numberChangesLeft: Int
    /// When the current code or link stops working, if one was sent.
    public var codeExpiresAt: Date?
    public var expiresAt: Date

    public init(
        correlationId: String, flow: PossessionFlowType, status: PossessionStatus, maskedPhoneNumber: String?,
        phoneNumberNeeded: Bool, resendsLeft: Int, retriesLeft: Int, numberChangesLeft: Int, codeExpiresAt: Date?,
        expiresAt: Date
    ) {
        self.correlationId = correlationId
        self.flow = flow
        self.status = status
        self.maskedPhoneNumber = maskedPhoneNumber
        self.phoneNumberNeeded = phoneNumberNeeded
        self.resendsLeft = resendsLeft
        self.retriesLeft = retriesLeft
        self.numberChangesLeft = numberChangesLeft
        self.codeExpiresAt = codeExpiresAt
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/possession/{id}/otp/start`, `…/link/start` and `…/otp/change-number`: the phone number, when the
/// backend gave none or it changes.
public struct PossessionPhoneRequest: Codable, Sendable, Equatable {
    public var phoneNumber: String?
    /// How a mobile flow's code goes: `sms` (the default), `voice` or `whatsapp`. A desktop flow's link goes by SMS.
    public var channel: Channel?

    public init(phoneNumber: String? = nil, channel: Channel? = nil) {
        self.phoneNumber = phoneNumber
        self.channel = channel
    }
}

/// `POST /v1/possession/{id}/otp/resend` (optional body): the code again, by the same or another phone channel.
public struct PossessionResendRequest: Codable, Sendable, Equatable {
    /// `sms` (the default), `voice` or `whatsapp`; the code stays the same whatever the channel.
    public var channel: Channel?

    public init(channel: Channel? = nil) {
        self.channel = channel
    }
}

/// `POST /v1/possession/{id}/otp/finish`.
public struct PossessionCodeRequest: Codable, Sendable, Equatable {
    public var code: String

    public init(code: String) {
        self.code = code
    }
}

/// `POST /v1/possession/{id}/validate` (API key): the backend's answer, given once.
public struct PossessionValidation: Codable, Sendable, Equatable {
    public var success: Bool
    /// Why not, when `success` is false: `pending`, `failed`, `expired` or `already_validated`.
    public var reason: String?
    /// The E.164 number proven (or being proven).
    public var phoneNumber: String?
    public var flow: PossessionFlowType
    public var method: PossessionMethod?
    public var completedAt: Date?
    /// Whether the number proven is one of the project's test numbers (fixed code, never sent to): nothing was
    /// proven about a real phone, so a production backend should refuse it.
    public var testNumber: Bool

    public init(
        success: Bool, reason: String?, phoneNumber: String?, flow: PossessionFlowType, method: PossessionMethod?,
        completedAt: Date?, testNumber: Bool = false
    ) {
        self.success = success
        self.reason = reason
        self.phoneNumber = phoneNumber
        self.flow = flow
        self.method = method
        self.completedAt = completedAt
        self.testNumber = testNumber
    }
}
