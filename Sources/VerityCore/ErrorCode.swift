/// The stable error codes of the Verity API, shared by the server and the SDK.
///
/// A code never changes meaning once released; clients branch on it, not on the message.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    // 400
    /// A field is missing, of the wrong type or out of range; `detail` names it.
    case invalidRequest = "invalid_request"
    /// The body is not JSON, or not the JSON object the endpoint takes.
    case malformedJSON = "malformed_json"
    /// The phone number is not a valid E.164 number for its country.
    case invalidPhoneNumber = "invalid_phone_number"
    /// The email address is not a valid address.
    case invalidEmail = "invalid_email"
    /// The code is not of the form the verification sends (length, digits).
    case invalidCode = "invalid_code"
    /// The locale is not a BCP 47 language tag the project's templates know.
    case invalidLocale = "invalid_locale"
    /// A device's public key is not a P-256 key in base64 DER form.
    case invalidPublicKey = "invalid_public_key"
    /// A device's signature, or a signed token, does not verify.
    case invalidSignature = "invalid_signature"
    /// A login id is neither an email address nor a phone number, or a user's login ids conflict.
    case invalidLoginId = "invalid_login_id"
    /// Custom session claims are not a JSON object, are too large, or name a reserved claim.
    case invalidClaims = "invalid_claims"
    /// A role's name or permissions are not valid.
    case invalidRole = "invalid_role"
    /// The step needs a phone number and the request or flow has none.
    case phoneNumberRequired = "phone_number_required"
    // 401 / 403
    /// The credential (API key, bearer token, device JWT, admin token) is missing or not valid.
    case unauthorized
    /// A device token's id (`jti`) was already used: each signed device call is single use.
    case tokenReplayed = "token_replayed"
    /// The code does not match; the attempt was counted.
    case wrongCode = "wrong_code"
    /// The session token is missing, invalid, expired or revoked.
    case invalidSession = "invalid_session"
    /// The refresh token is unknown, expired or revoked.
    case invalidRefreshToken = "invalid_refresh_token"
    /// An already rotated refresh token was presented again, and its whole session was revoked.
    case refreshTokenReused = "refresh_token_reused"
    /// The user is disabled and cannot sign in or refresh.
    case userDisabled = "user_disabled"
    /// The push challenge was denied on the device.
    case challengeDenied = "challenge_denied"
    /// The credential is valid but does not allow this operation.
    case forbidden
    /// The challenge belongs to another factor than the one that answered.
    case wrongFactor = "wrong_factor"
    /// The destination's country is not among those the project sends to.
    case countryNotAllowed = "country_not_allowed"
    /// The destination is a premium-rate or shared-cost number, which never receives codes.
    case premiumRateNumber = "premium_rate_number"
    /// The project does not send codes by this channel.
    case channelDisabled = "channel_disabled"
    /// The project sends codes only to an app that proved it is the real app (see ``AppVerificationRequest``).
    case appVerificationRequired = "app_verification_required"
    /// The challenge needs an answer signed by the factor's user-verification key (see ``FactorKeyType``).
    case userVerificationRequired = "user_verification_required"
    /// The factor was suspended after its owner reported unusual activity; the backend deletes it or enrolls anew.
    case factorSuspended = "factor_suspended"
    // 404 / 405
    /// No resource at this path (a route or an id that does not exist).
    case notFound = "not_found"
    /// No pending verification has this id or destination: unknown, expired, approved or cancelled.
    case verificationNotFound = "verification_not_found"
    /// No project has this id.
    case projectNotFound = "project_not_found"
    /// No factor of this project has this id.
    case factorNotFound = "factor_not_found"
    /// No challenge of this project has this id.
    case challengeNotFound = "challenge_not_found"
    /// No user of this project has this id or login id.
    case userNotFound = "user_not_found"
    /// No role of this project has this name.
    case roleNotFound = "role_not_found"
    /// No possession check has this token or correlation id.
    case possessionNotFound = "possession_not_found"
    /// The path exists but not with this HTTP method; the answer's `Allow` lists those it takes.
    case methodNotAllowed = "method_not_allowed"
    // 409 / 413 / 415
    /// The request conflicts with the current state.
    case conflict
    /// The factor has not proved possession of its key yet, so it cannot be used.
    case factorNotVerified = "factor_not_verified"
    /// The user has no verified push factor to send a challenge to.
    case noVerifiedFactors = "no_verified_factors"
    /// The challenge was already approved or denied; an answer counts once.
    case challengeAlreadyAnswered = "challenge_already_answered"
    /// The challenge expired before it was answered.
    case challengeExpired = "challenge_expired"
    /// The login id belongs to another user of the project.
    case loginIdTaken = "login_id_taken"
    /// A role with this name already exists in the project.
    case roleExists = "role_exists"
    /// The project already has the most test numbers allowed.
    case testNumberLimitReached = "test_number_limit_reached"
    /// The user has no second factor to step up with.
    case noSecondFactor = "no_second_factor"
    /// The challenge has not been answered yet.
    case challengePending = "challenge_pending"
    /// This step of a possession check is not allowed in the check's current state.
    case stepOutOfOrder = "step_out_of_order"
    /// The possession check's token or code has expired.
    case possessionExpired = "possession_expired"
    /// The request body is larger than the endpoint takes.
    case payloadTooLarge = "payload_too_large"
    /// The request body is not of the media type the endpoint takes (JSON, or a form on the Twilio face).
    case unsupportedMediaType = "unsupported_media_type"
    // 429
    /// Too many requests from this client, project or login id; `Retry-After` says when to try again.
    case rateLimited = "rate_limited"
    /// Too many sends to this destination within the window.
    case maxSendAttemptsReached = "max_send_attempts_reached"
    /// Too many wrong codes: the verification is dead and a new one must be started.
    case maxCheckAttemptsReached = "max_check_attempts_reached"
    /// The possession check has used all its resends.
    case resendLimitReached = "resend_limit_reached"
    /// The possession check has used all its code retries.
    case retryLimitReached = "retry_limit_reached"
    /// The possession check has used all its phone number changes.
    case numberChangeLimitReached = "number_change_limit_reached"
    /// Too many wrong codes for this TOTP factor; it is locked for a while.
    case factorLocked = "factor_locked"
    // 5xx
    /// The server failed; nothing was changed. Retry later, and report it if it persists.
    case internalError = "internal_error"
    /// The server cannot serve now (starting, stopping, or its database is unreachable); retry later.
    case serviceUnavailable = "service_unavailable"

    /// The generic code of an HTTP error status that came without a code of its own (a framework's 404, a proxy's
    /// 502): the one map the server and VerityKit share.
    public init(genericFor status: Int) {
        self =
            switch status {
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 405: .methodNotAllowed
            case 409: .conflict
            case 413: .payloadTooLarge
            case 415: .unsupportedMediaType
            case 429: .rateLimited
            case 503: .serviceUnavailable
            case 500...599: .internalError
            default: .invalidRequest
            }
    }

    /// The HTTP status the server answers with for this code.
    public var httpStatus: Int {
        switch self {
        case .invalidRequest, .malformedJSON, .invalidPhoneNumber, .invalidEmail, .invalidCode, .invalidLocale,
            .invalidPublicKey, .invalidSignature, .invalidLoginId, .invalidClaims, .invalidRole,
            .phoneNumberRequired:
            400
        case .unauthorized, .tokenReplayed, .wrongCode, .invalidSession, .invalidRefreshToken, .refreshTokenReused:
            401
        case .forbidden, .countryNotAllowed, .premiumRateNumber, .channelDisabled, .wrongFactor, .userDisabled,
            .challengeDenied,
            .appVerificationRequired, .userVerificationRequired, .factorSuspended:
            403
        case .notFound, .verificationNotFound, .projectNotFound, .factorNotFound, .challengeNotFound,
            .userNotFound, .roleNotFound, .possessionNotFound:
            404
        case .methodNotAllowed: 405
        case .conflict, .factorNotVerified, .noVerifiedFactors, .challengeAlreadyAnswered, .loginIdTaken, .roleExists,
            .testNumberLimitReached, .noSecondFactor, .challengePending, .stepOutOfOrder:
            409
        case .challengeExpired, .possessionExpired: 410
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .rateLimited, .maxSendAttemptsReached, .maxCheckAttemptsReached, .resendLimitReached, .retryLimitReached,
            .numberChangeLimitReached, .factorLocked:
            429
        case .internalError: 500
        case .serviceUnavailable: 503
        }
    }

    /// A short, fixed, human-readable summary (the problem's `title`).
    public var title: String {
        switch self {
        case .invalidRequest: "The request is not valid."
        case .malformedJSON: "The request body is not valid JSON."
        case .invalidPhoneNumber: "The phone number is not valid."
        case .invalidEmail: "The email address is not valid."
        case .invalidCode: "The code is not valid."
        case .invalidLocale: "The locale is not valid."
        case .invalidPublicKey: "The public key is not a P-256 key in base64 DER form."
        case .invalidSignature: "The signature does not verify."
        case .invalidLoginId: "The login ids are not valid."
        case .invalidClaims: "The custom claims are not valid."
        case .userNotFound: "The user was not found."
        case .loginIdTaken: "The login id belongs to another user."
        case .invalidRole: "The role or its permissions are not valid."
        case .wrongCode: "The code is wrong."
        case .premiumRateNumber: "Premium-rate and shared-cost numbers cannot receive codes."
        case .channelDisabled: "This project does not send codes by this channel."
        case .invalidSession: "The session token is missing, invalid, expired or revoked."
        case .invalidRefreshToken: "The refresh token is unknown, expired or revoked."
        case .refreshTokenReused: "The refresh token was already used; the session was revoked."
        case .userDisabled: "The user is disabled."
        case .challengeDenied: "The challenge was denied."
        case .appVerificationRequired: "The app must prove it is the project's app before codes are sent."
        case .userVerificationRequired: "The challenge must be approved with the user-verification key."
        case .factorSuspended: "The factor is suspended."
        case .roleNotFound: "The role was not found."
        case .roleExists: "A role with this name already exists."
        case .testNumberLimitReached: "The project already has the most test numbers allowed."
        case .noSecondFactor: "The user has no second factor to step up with."
        case .challengePending: "The challenge has not been answered yet."
        case .phoneNumberRequired: "A phone number is needed for this step."
        case .possessionNotFound: "The possession check was not found."
        case .stepOutOfOrder: "This step is not allowed now."
        case .possessionExpired: "The possession check has expired."
        case .resendLimitReached: "Too many resends for this possession check."
        case .retryLimitReached: "Too many code retries for this possession check."
        case .numberChangeLimitReached: "Too many phone number changes for this possession check."
        case .tokenReplayed: "This device token was already used."
        case .wrongFactor: "The challenge belongs to another factor."
        case .factorNotFound: "The factor was not found."
        case .challengeNotFound: "The challenge was not found."
        case .factorNotVerified: "The factor is not verified yet."
        case .noVerifiedFactors: "The user has no verified push factor."
        case .challengeAlreadyAnswered: "The challenge was already answered."
        case .challengeExpired: "The challenge has expired."
        case .unauthorized: "Missing or invalid credentials."
        case .forbidden: "Not allowed."
        case .countryNotAllowed: "The destination country is not allowed for this project."
        case .notFound: "Not found."
        case .verificationNotFound: "The verification was not found."
        case .projectNotFound: "The project was not found."
        case .methodNotAllowed: "Method not allowed."
        case .conflict: "The request conflicts with the current state."
        case .payloadTooLarge: "The request body is too large."
        case .unsupportedMediaType: "The request body must be JSON."
        case .rateLimited: "Too many requests."
        case .maxSendAttemptsReached: "Too many sends to this destination."
        case .maxCheckAttemptsReached: "Too many check attempts for this verification."
        case .factorLocked: "Too many wrong codes for this factor."
        case .internalError: "Internal server error."
        case .serviceUnavailable: "The service is unavailable."
        }
    }
}
