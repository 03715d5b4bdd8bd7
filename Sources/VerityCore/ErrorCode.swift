/// The stable error codes of the Verity API, shared by the server and the SDK.
///
/// A code never changes meaning once released; clients branch on it, not on the message.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    // 400
    case invalidRequest = "invalid_request"
    case malformedJSON = "malformed_json"
    case invalidPhoneNumber = "invalid_phone_number"
    case invalidEmail = "invalid_email"
    case invalidCode = "invalid_code"
    case invalidLocale = "invalid_locale"
    case invalidPublicKey = "invalid_public_key"
    case invalidSignature = "invalid_signature"
    case invalidLoginId = "invalid_login_id"
    case invalidClaims = "invalid_claims"
    case invalidRole = "invalid_role"
    case phoneNumberRequired = "phone_number_required"
    // 401 / 403
    case unauthorized
    case tokenReplayed = "token_replayed"
    case wrongCode = "wrong_code"
    case invalidSession = "invalid_session"
    case invalidRefreshToken = "invalid_refresh_token"
    case refreshTokenReused = "refresh_token_reused"
    case userDisabled = "user_disabled"
    case challengeDenied = "challenge_denied"
    case forbidden
    case wrongFactor = "wrong_factor"
    case countryNotAllowed = "country_not_allowed"
    case premiumRateNumber = "premium_rate_number"
    case channelDisabled = "channel_disabled"
    /// The project sends codes only to an app that proved it is the real app (see ``AppVerificationRequest``).
    case appVerificationRequired = "app_verification_required"
    /// The challenge needs an answer signed by the factor's user-verification key (see ``FactorKeyType``).
    case userVerificationRequired = "user_verification_required"
    /// The factor was suspended after its owner reported unusual activity; the backend deletes it or enrolls anew.
    case factorSuspended = "factor_suspended"
    // 404 / 405
    case notFound = "not_found"
    case verificationNotFound = "verification_not_found"
    case projectNotFound = "project_not_found"
    case factorNotFound = "factor_not_found"
    case challengeNotFound = "challenge_not_found"
    case userNotFound = "user_not_found"
    case roleNotFound = "role_not_found"
    case possessionNotFound = "possession_not_found"
    case methodNotAllowed = "method_not_allowed"
    // 409 / 413 / 415
    case conflict
    case factorNotVerified = "factor_not_verified"
    case noVerifiedFactors = "no_verified_factors"
    case challengeAlreadyAnswered = "challenge_already_answered"
    case challengeExpired = "challenge_expired"
    case loginIdTaken = "login_id_taken"
    case roleExists = "role_exists"
    case testNumberLimitReached = "test_number_limit_reached"
    case noSecondFactor = "no_second_factor"
    case challengePending = "challenge_pending"
    case stepOutOfOrder = "step_out_of_order"
    case possessionExpired = "possession_expired"
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    // 429
    case rateLimited = "rate_limited"
    case maxSendAttemptsReached = "max_send_attempts_reached"
    case maxCheckAttemptsReached = "max_check_attempts_reached"
    case resendLimitReached = "resend_limit_reached"
    case retryLimitReached = "retry_limit_reached"
    case numberChangeLimitReached = "number_change_limit_reached"
    case factorLocked = "factor_locked"
    // 5xx
    case internalError = "internal_error"
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
