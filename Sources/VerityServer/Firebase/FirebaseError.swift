import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// An error as Google's APIs answer it, which the Firebase SDKs read by its `message`:
/// `{"error": {"code": 400, "message": "INVALID_CODE", "errors": [{"message", "domain", "reason"}], "status"}}`.
struct FirebaseError: Error, Equatable {
    var status: Int
    var message: String

    init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    static func badRequest(_ message: String) -> FirebaseError {
        FirebaseError(status: 400, message: message)
    }

    static let invalidAPIKey = FirebaseError.badRequest("API key not valid. Please pass a valid API key.")
    static let missingPhoneNumber = FirebaseError.badRequest("MISSING_PHONE_NUMBER")
    static let invalidPhoneNumber = FirebaseError.badRequest("INVALID_PHONE_NUMBER")
    static let missingSessionInfo = FirebaseError.badRequest("MISSING_SESSION_INFO")
    static let invalidSessionInfo = FirebaseError.badRequest("INVALID_SESSION_INFO")
    static let missingCode = FirebaseError.badRequest("MISSING_CODE")
    static let invalidIdToken = FirebaseError.badRequest("INVALID_ID_TOKEN")
    static let invalidRefreshToken = FirebaseError.badRequest("INVALID_REFRESH_TOKEN")
    static let operationNotAllowed = FirebaseError.badRequest("OPERATION_NOT_ALLOWED")
    static let userNotFound = FirebaseError.badRequest("USER_NOT_FOUND")
    static let unauthenticated = FirebaseError(
        status: 401, message: "Request had invalid authentication credentials. Expected a valid API key.")

    /// What a Domain refusal is called by Firebase's clients.
    init(_ error: VerityError) {
        if error == SessionService.expiredSession {
            self = .badRequest("TOKEN_EXPIRED")
            return
        }
        switch error.code {
        case .invalidPhoneNumber, .phoneNumberRequired, .invalidLoginId, .countryNotAllowed, .premiumRateNumber:
            self = .invalidPhoneNumber
        case .wrongCode, .invalidCode: self = .badRequest("INVALID_CODE")
        case .verificationNotFound: self = .badRequest("SESSION_EXPIRED")
        case .rateLimited, .maxSendAttemptsReached, .maxCheckAttemptsReached:
            self = .badRequest("TOO_MANY_ATTEMPTS_TRY_LATER")
        case .invalidRefreshToken, .refreshTokenReused: self = .invalidRefreshToken
        case .invalidSession: self = .invalidIdToken
        case .userDisabled: self = .badRequest("USER_DISABLED")
        case .appVerificationRequired: self = .badRequest("MISSING_APP_CREDENTIAL")
        // What Google answers when the project has the phone provider turned off.
        case .channelDisabled: self = .operationNotAllowed
        case .malformedJSON, .unsupportedMediaType: self = .badRequest("INVALID_ARGUMENT : the body is not JSON")
        case .payloadTooLarge: self = FirebaseError(status: 413, message: "PAYLOAD_TOO_LARGE")
        case .internalError, .serviceUnavailable: self = FirebaseError(status: 503, message: "UNAVAILABLE")
        // Every other code: Google's INVALID_ARGUMENT, naming the code.
        case .invalidRequest, .invalidEmail, .invalidLocale, .invalidPublicKey, .invalidSignature, .invalidClaims,
            .invalidRole,
            .unauthorized, .tokenReplayed,
            .challengeDenied, .forbidden, .wrongFactor, .userVerificationRequired, .factorSuspended,
            .notFound, .projectNotFound, .factorNotFound, .challengeNotFound, .userNotFound, .roleNotFound,
            .possessionNotFound,
            .methodNotAllowed,
            .conflict, .factorNotVerified, .noVerifiedFactors, .challengeAlreadyAnswered, .loginIdTaken, .roleExists,
            .testNumberLimitReached, .noSecondFactor, .challengePending, .stepOutOfOrder,
            .challengeExpired, .possessionExpired,
            .resendLimitReached, .retryLimitReached, .numberChangeLimitReached, .factorLocked:
            self = .badRequest("INVALID_ARGUMENT : \(error.code.rawValue)")
        }
    }

    /// Google's `status` for the HTTP status.
    private var statusName: String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 404: "NOT_FOUND"
        case 413: "INVALID_ARGUMENT"
        case 503: "UNAVAILABLE"
        default: "INTERNAL"
        }
    }

    var response: Response {
        let reason = message.hasPrefix("API key") ? "badRequest" : "invalid"
        let body: [String: JSONValue] = [
            "error": .object([
                "code": .integer(Int64(status)), "message": .string(message), "status": .string(statusName),
                "errors": .array([
                    .object(["message": .string(message), "domain": .string("global"), "reason": .string(reason)])
                ]),
            ])
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(body)) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: status),
            headers: [.contentType: "application/json; charset=UTF-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension FaceErrorMiddleware where Context == VerityRequestContext, Wording == FaceErrorShape<FirebaseError> {
    /// The Firebase face's error middleware.
    static func firebase(logger: Logger) -> Self {
        FaceErrorMiddleware(wording: FaceErrorShape<FirebaseError>(), logger: logger)
    }
}

extension FirebaseError: FaceError {
    static let unknownRoute = FirebaseError(status: 404, message: "NOT_FOUND")
    static let unreadableRequest = FirebaseError.badRequest("INVALID_ARGUMENT")
    static let internalError = FirebaseError(status: 500, message: "INTERNAL_ERROR")
}
