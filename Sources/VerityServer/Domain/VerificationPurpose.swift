import Foundation
import VerityCore

/// What a code proves; codes of one purpose never pass for another.
///
/// A possession flow's codes and links carry the flow's id, so two flows for one number never share a code.
struct VerificationPurpose: RawRepresentable, Hashable, Sendable {
    let rawValue: String

    /// Started by a backend through `/v1/verifications`.
    static let api = Self(rawValue: "api")
    /// A sign-in (sign-up-or-in) code from `/v1/auth/otp/start`.
    static let signIn = Self(rawValue: "sign_in")
    /// A second factor for a signed-in session, from `/v1/auth/stepup/start`.
    static let stepUp = Self(rawValue: "step_up")
    /// A second factor for one session, for clients whose verify call names only the login id and the code
    /// (Descope's SDKs): the code carries the session that asked for it.
    static func stepUp(session sessionId: String) -> Self { Self(rawValue: "\(stepUpSessionPrefix)\(sessionId)") }
    static let stepUpSessionPrefix = "step_up:"
    /// The session a session-bound step-up code steps up.
    var steppedUpSession: String? {
        rawValue.hasPrefix(Self.stepUpSessionPrefix) ? String(rawValue.dropFirst(Self.stepUpSessionPrefix.count)) : nil
    }

    /// A code to a new email address or phone number of a signed-in user (Descope's `otp/update/email|phone`): the
    /// code carries the session that asked, and proving it makes the address that user's login id of its kind.
    static func loginUpdate(session sessionId: String) -> Self { Self(rawValue: "\(loginUpdatePrefix)\(sessionId)") }
    static let loginUpdatePrefix = "login_update:"
    /// The session whose user a login-update code adds its address to.
    var loginUpdateSession: String? {
        rawValue.hasPrefix(Self.loginUpdatePrefix) ? String(rawValue.dropFirst(Self.loginUpdatePrefix.count)) : nil
    }

    /// The code of one possession flow.
    static func possessionCode(_ flowId: String) -> Self { Self(rawValue: "possession_code:\(flowId)") }
    /// The instant link of one possession flow.
    static func possessionLink(_ flowId: String) -> Self { Self(rawValue: "possession_link:\(flowId)") }
    /// Started through the Twilio face for one of its Verify services (`VA…`): each service has its own
    /// verifications, as on Twilio.
    static func twilioService(_ serviceSid: String) -> Self { Self(rawValue: "twilio:\(serviceSid)") }

    /// Whether this is an instant link rather than a code.
    var isLink: Bool { rawValue.hasPrefix("possession_link:") }
}
