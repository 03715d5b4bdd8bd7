import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// An error as Descope answers it, which its SDKs read by `errorCode`:
/// `{"errorCode": "E061102", "errorDescription": "…", "errorMessage": "…"}`, with `Retry-After` on a 429.
struct DescopeError: Error, Equatable {
    var status: Int
    var errorCode: String
    var description: String
    var message: String
    var retryAfter: Int?

    init(status: Int, errorCode: String, description: String, message: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.errorCode = errorCode
        self.description = description
        self.message = message ?? description
        self.retryAfter = retryAfter
    }

    /// `E011003`: the request is not valid (Descope's "request validation failed").
    static func badRequest(_ message: String) -> DescopeError {
        DescopeError(status: 400, errorCode: "E011003", description: "Request is invalid", message: message)
    }

    /// `E011002`: the `Authorization: Bearer <projectId>[:<secret>]` header is missing or names another project.
    static func unauthorized(_ message: String) -> DescopeError {
        DescopeError(status: 401, errorCode: "E011002", description: "Unauthorized", message: message)
    }

    static let wrongCode = DescopeError(
        status: 401, errorCode: "E061102", description: "Wrong code", message: "The code is wrong or expired.")
    static let userNotFound = DescopeError(
        status: 400, errorCode: "E062108", description: "User not found", message: "No user has this login id.")
    static let tokenRevoked = DescopeError(
        status: 401, errorCode: "E064001", description: "Token expired by logged out",
        message: "The refresh token is unknown, expired or revoked; sign in again.")

    /// The seconds a limited client is told to wait when the Domain names none.
    static let defaultRetryAfter = 60

    /// What a Domain refusal is called by Descope's clients.
    init(_ error: VerityError) {
        switch error.code {
        case .wrongCode, .invalidCode, .verificationNotFound:
            self = .wrongCode
            if error.code == .invalidCode { self.message = error.detail ?? message }
        case .maxCheckAttemptsReached:
            self.init(
                status: 429, errorCode: "E061103", description: "Too many OTP attempts",
                message: error.detail ?? "Too many wrong codes: request a new code.",
                retryAfter: error.retryAfter ?? Self.defaultRetryAfter)
        case .rateLimited, .maxSendAttemptsReached, .resendLimitReached, .retryLimitReached, .factorLocked:
            self.init(
                status: 429, errorCode: "E130429", description: "Rate limit exceeded",
                message: error.detail ?? "Too many requests; try again later.",
                retryAfter: error.retryAfter ?? Self.defaultRetryAfter)
        case .invalidRefreshToken, .refreshTokenReused, .invalidSession:
            self = .tokenRevoked
            if let detail = error.detail { self.message = detail }
        case .userNotFound:
            self = .userNotFound
        case .loginIdTaken:
            self.init(
                status: 400, errorCode: "E062107", description: "User already exists",
                message: error.detail ?? "A user already has this login id.")
        case .unauthorized, .projectNotFound:
            self = .unauthorized(error.detail ?? "Send `Authorization: Bearer <projectId>`.")
        case .malformedJSON:
            self.init(
                status: 400, errorCode: "E011001", description: "Bad request",
                message: error.detail ?? "The body is not JSON.")
        case .internalError:
            self.init(status: 500, errorCode: "E010001", description: "Internal error", message: "Internal error")
        case .serviceUnavailable:
            self.init(
                status: 503, errorCode: "E010002", description: "Service unavailable", message: "Try again later.",
                retryAfter: error.retryAfter)
        // Every other code: Descope's "request is invalid", with the code's own client-error status.
        case .invalidRequest, .invalidPhoneNumber, .invalidEmail, .invalidLocale, .invalidPublicKey, .invalidSignature,
            .invalidLoginId, .invalidClaims, .invalidRole, .phoneNumberRequired,
            .tokenReplayed,
            .userDisabled, .challengeDenied, .forbidden, .wrongFactor, .countryNotAllowed, .premiumRateNumber,
            .channelDisabled, .appVerificationRequired, .userVerificationRequired, .factorSuspended,
            .notFound, .factorNotFound, .challengeNotFound, .roleNotFound, .possessionNotFound,
            .methodNotAllowed,
            .conflict, .factorNotVerified, .noVerifiedFactors, .challengeAlreadyAnswered, .roleExists,
            .testNumberLimitReached, .noSecondFactor, .challengePending, .stepOutOfOrder,
            .challengeExpired, .possessionExpired,
            .payloadTooLarge,
            .unsupportedMediaType,
            .numberChangeLimitReached:
            let status = error.code.httpStatus
            self.init(
                status: (400..<500).contains(status) ? status : 400, errorCode: "E011003",
                description: "Request is invalid", message: error.detail ?? error.code.rawValue)
        }
    }

    var response: Response {
        let body: [String: String] = [
            "errorCode": errorCode, "errorDescription": description, "errorMessage": message,
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: (try? encoder.encode(body)) ?? Data())))
    }
}

extension DescopeError: FaceError {
    static let unknownRoute = DescopeError(
        status: 404, errorCode: "E011003", description: "Not found", message: "No such route.")
    static let unreadableRequest = DescopeError.badRequest("The request is not valid.")
    static let internalError = DescopeError(VerityError(.internalError))
}
