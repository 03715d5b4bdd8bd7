import Foundation

/// The header that names the project on the app-facing `/v1/auth/…` endpoints (its public id, `prj_…`).
public enum AuthHeaders {
    public static let project = "X-Verity-Project"
    /// The proof that the request comes from the project's app (``AppVerificationPush/proof(id:secret:)``), on
    /// requests that send a code when the project requires app verification.
    public static let appVerification = "X-Verity-App-Verification"
}

/// `POST /v1/auth/otp/start`: send a sign-in code to a login id (sign-up-or-in).
public struct OTPStartRequest: Codable, Sendable, Equatable {
    /// An email address or an E.164 phone number; the code goes to it.
    public var loginId: String
    /// `sms`, `voice` or `whatsapp` for a phone number, `email` for an email address; `sms` or `email` from the login
    /// id when absent.
    public var channel: Channel?
    /// A BCP 47 language tag for the message text.
    public var locale: String?
    /// Whether to send the pending code again when one is pending (the default). With `false` a pending code is
    /// returned as it is and nothing is sent (`sent` is false): what a reentrant `verifyPhoneNumber` needs.
    public var resend: Bool?
    /// Claims the session this sign-in opens is to carry in every token it issues, beside the user's custom claims
    /// (which win a name both have: the client chooses these, so they never pass for the backend's): a JSON object
    /// of at most 4 KiB, no registered claim name.
    public var sessionClaims: [String: JSONValue]?

    public init(
        loginId: String, channel: Channel? = nil, locale: String? = nil, resend: Bool? = nil,
        sessionClaims: [String: JSONValue]? = nil
    ) {
        self.loginId = loginId
        self.channel = channel
        self.locale = locale
        self.resend = resend
        self.sessionClaims = sessionClaims
    }
}

/// The answer to an OTP start: where the code went, never the code.
public struct OTPStartResponse: Codable, Sendable, Equatable {
    /// The pending sign-in verification (`ver_…`); `POST /v1/auth/otp/verify` accepts it instead of the login id.
    public var verificationId: String
    public var channel: Channel
    /// The destination with most characters hidden, for example `+1******4567` or `j***@example.com`.
    public var maskedDestination: String
    /// When the code stops working.
    public var expiresAt: Date
    /// Whether this request sent a message (false for a test number, or with `resend: false` and a pending code).
    public var sent: Bool

    public init(verificationId: String, channel: Channel, maskedDestination: String, expiresAt: Date, sent: Bool) {
        self.verificationId = verificationId
        self.channel = channel
        self.maskedDestination = maskedDestination
        self.expiresAt = expiresAt
        self.sent = sent
    }
}

/// `POST /v1/auth/otp/verify`: name the sign-in by `loginId` or by `verificationId`, and give the code.
public struct OTPVerifyRequest: Codable, Sendable, Equatable {
    public var loginId: String?
    public var verificationId: String?
    public var code: String

    public init(loginId: String? = nil, verificationId: String? = nil, code: String) {
        self.loginId = loginId
        self.verificationId = verificationId
        self.code = code
    }
}

/// A signed-in session: what OTP verify, refresh and step-up answer.
public struct AuthResponse: Codable, Sendable, Equatable {
    /// The session token: a short-lived ES256 JWT that backends validate offline against the project's JWKS.
    public var sessionJwt: String
    /// When ``sessionJwt`` expires.
    public var sessionExpiresAt: Date
    /// The new refresh token (`vrt_…`); the one presented to refresh is dead from now on. Absent after a step-up,
    /// which keeps the refresh token.
    public var refreshToken: String?
    /// When the refresh token expires unless it is used (each refresh extends the session).
    public var refreshExpiresAt: Date
    public var user: User
    /// Whether this sign-in created the user.
    public var firstSeen: Bool

    public init(
        sessionJwt: String, sessionExpiresAt: Date, refreshToken: String?, refreshExpiresAt: Date, user: User,
        firstSeen: Bool
    ) {
        self.sessionJwt = sessionJwt
        self.sessionExpiresAt = sessionExpiresAt
        self.refreshToken = refreshToken
        self.refreshExpiresAt = refreshExpiresAt
        self.user = user
        self.firstSeen = firstSeen
    }
}

/// `POST /v1/auth/refresh` and `POST /v1/auth/logout`.
public struct RefreshRequest: Codable, Sendable, Equatable {
    public var refreshToken: String

    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }
}

/// `GET /v1/auth/me`: the signed-in user and what the session says about them.
public struct MeResponse: Codable, Sendable, Equatable {
    public var user: User
    /// The union of the permissions of the user's roles.
    public var permissions: [String]
    /// The session (`ses_…`).
    public var sessionId: String
    /// How the session was authenticated, for example `["otp", "sms"]`.
    public var amr: [String]
    /// `mfa` once the session was stepped up with a second factor.
    public var acr: String?

    public init(user: User, permissions: [String], sessionId: String, amr: [String], acr: String?) {
        self.user = user
        self.permissions = permissions
        self.sessionId = sessionId
        self.amr = amr
        self.acr = acr
    }
}

/// How a step-up proves the second factor.
public enum StepUpMethod: String, WireEnum, Sendable {
    /// A code sent to the user's other login id (email after an SMS sign-in, and the other way round).
    case otp
    /// A push challenge to the user's verified push factor, approved on the device.
    case push
    /// A code from the user's authenticator app (a verified TOTP factor); nothing is sent.
    case totp
}

/// `POST /v1/auth/stepup/start` (with the session token): every field is optional.
public struct StepUpStartRequest: Codable, Sendable, Equatable {
    /// Which second factor; by default push when the user has a verified push factor, then TOTP when they have a
    /// verified TOTP factor, otherwise a code.
    public var method: StepUpMethod?
    /// A BCP 47 language tag for the code message.
    public var locale: String?
    /// How an `otp` code to a phone number goes: `sms` (the default), `voice` or `whatsapp`.
    public var channel: Channel?

    public init(method: StepUpMethod? = nil, locale: String? = nil, channel: Channel? = nil) {
        self.method = method
        self.locale = locale
        self.channel = channel
    }
}

/// What a step-up start did: a code went out (`otp`), a push challenge is waiting on the device (`push`), or the
/// user is to type a code from their authenticator app (`totp`).
public struct StepUpStartResponse: Codable, Sendable, Equatable {
    public var method: StepUpMethod
    /// The channel the code went to (`otp` only).
    public var channel: Channel?
    /// Where the code went, masked (`otp` only).
    public var maskedDestination: String?
    /// The push challenge to approve (`push` only).
    public var challengeId: String?
    /// When the code or the challenge expires; `nil` for `totp`, whose codes change every time step.
    public var expiresAt: Date?

    public init(
        method: StepUpMethod, channel: Channel? = nil, maskedDestination: String? = nil, challengeId: String? = nil,
        expiresAt: Date? = nil
    ) {
        self.method = method
        self.channel = channel
        self.maskedDestination = maskedDestination
        self.challengeId = challengeId
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/auth/stepup/verify` (with the session token): the code, or the push challenge once approved.
public struct StepUpVerifyRequest: Codable, Sendable, Equatable {
    /// The code sent by the step-up start, or with `method: totp` the authenticator app's code.
    public var code: String?
    public var challengeId: String?
    /// What `code` is: `otp` (the default) or `totp`.
    public var method: StepUpMethod?

    public init(code: String? = nil, challengeId: String? = nil, method: StepUpMethod? = nil) {
        self.code = code
        self.challengeId = challengeId
        self.method = method
    }
}

/// A project role: a name and the permissions it grants.
public struct Role: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    public var permissions: [String]
    public var createdAt: Date

    public init(name: String, description: String? = nil, permissions: [String], createdAt: Date) {
        self.name = name
        self.description = description
        self.permissions = permissions
        self.createdAt = createdAt
    }
}

/// `POST /v1/roles` (API key).
public struct CreateRoleRequest: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    public var permissions: [String]?

    public init(name: String, description: String? = nil, permissions: [String]? = nil) {
        self.name = name
        self.description = description
        self.permissions = permissions
    }
}

/// `PATCH /v1/roles/{name}` (API key): an absent field stays as it is.
public struct UpdateRoleRequest: Codable, Sendable, Equatable {
    public var description: String?
    /// Replaces all the role's permissions.
    public var permissions: [String]?

    public init(description: String? = nil, permissions: [String]? = nil) {
        self.description = description
        self.permissions = permissions
    }
}

/// `POST /v1/users/{id}/roles` (API key): roles to add to the user.
public struct AssignRolesRequest: Codable, Sendable, Equatable {
    public var roles: [String]

    public init(roles: [String]) {
        self.roles = roles
    }
}

/// A test phone number: sign-in codes are never sent to it, the fixed code always works and no rate limit
/// applies. For app review and automated tests only.
public struct TestPhoneNumber: Codable, Sendable, Equatable {
    public var phoneNumber: String
    public var code: String
    public var createdAt: Date

    public init(phoneNumber: String, code: String, createdAt: Date) {
        self.phoneNumber = phoneNumber
        self.code = code
        self.createdAt = createdAt
    }
}

/// `POST /v1/test-numbers` (API key).
public struct CreateTestPhoneNumberRequest: Codable, Sendable, Equatable {
    public var phoneNumber: String
    /// 4 to 10 digits.
    public var code: String

    public init(phoneNumber: String, code: String) {
        self.phoneNumber = phoneNumber
        self.code = code
    }
}

/// Something security-relevant that happened to a user's sessions.
public struct SecurityEvent: Codable, Sendable, Equatable {
    /// `sev_…`
    public var id: String
    /// `refresh_token_reused`: a refresh token was presented after it had been used; the session's whole token
    /// family was revoked. `unusual_activity_reported`: a push factor denied a challenge with a signed
    /// ``DenyReason`` ("this wasn't me"); the project's ``UnusualActivityResponse`` was applied.
    public var type: String
    public var userId: String
    public var sessionId: String?
    /// The client address the request came from.
    public var ipAddress: String?
    public var createdAt: Date
    /// The push factor that reported unusual activity.
    public var factorId: String?
    /// The challenge it denied.
    public var challengeId: String?

    public init(
        id: String, type: String, userId: String, sessionId: String?, ipAddress: String?, createdAt: Date,
        factorId: String? = nil, challengeId: String? = nil
    ) {
        self.factorId = factorId
        self.challengeId = challengeId
        self.id = id
        self.type = type
        self.userId = userId
        self.sessionId = sessionId
        self.ipAddress = ipAddress
        self.createdAt = createdAt
    }
}
