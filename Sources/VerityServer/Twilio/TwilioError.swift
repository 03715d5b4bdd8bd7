import Foundation
import Hummingbird
import NIOCore
import VerityCore

/// An error as Twilio renders it: `{"code": 60200, "message": …, "more_info": …, "status": 400}`.
///
/// No `type` or `title`: twilio-python reads a body with those as an RFC 9457 problem and raises another exception
/// class than Twilio's own errors give.
struct TwilioError: Error, Sendable, Equatable {
    /// Twilio's numeric error code (`60200`, `20404`, …).
    var code: Int
    var message: String
    /// The HTTP status.
    var status: Int
    /// Seconds to wait, sent as `Retry-After`.
    var retryAfter: Int?

    /// 400 60200, the message Twilio gives: `Invalid parameter: To`.
    static func invalidParameter(_ name: String, _ reason: String? = nil) -> TwilioError {
        TwilioError(
            code: 60200, message: "Invalid parameter: \(name)" + (reason.map { " (\($0))" } ?? ""), status: 400)
    }

    static func missingParameter(_ name: String) -> TwilioError {
        invalidParameter(name, "\(name) is required")
    }

    static let authenticationFailed = TwilioError(code: 20003, message: "Authenticate", status: 401)

    /// 404 20404, with Twilio's message naming the resource path (without the `/v2` version).
    static func notFound(_ resource: String) -> TwilioError {
        TwilioError(code: 20404, message: "The requested resource \(resource) was not found", status: 404)
    }

    /// 403 60311: the proof sent to verify a factor (a signature, a TOTP code) does not verify it.
    static let factorVerificationFailed = TwilioError(code: 60311, message: "Factor verification failed", status: 403)

    /// 403 60324: an answer to a challenge, or a TOTP challenge's code, does not verify it.
    static let challengeVerificationFailed = TwilioError(
        code: 60324, message: "Challenge verification failed", status: 403)

    /// 400 60393: a passkey factor's registration needs authenticator criteria that neither its `config` nor its
    /// service sets; the message lists them.
    static func authenticatorCriteriaMissing(_ fields: [String]) -> TwilioError {
        TwilioError(
            code: 60393,
            message: "Authenticator criteria are missing from the request: \(fields.joined(separator: ", "))",
            status: 400)
    }

    /// The one table from Verity's error codes to Twilio's.
    ///
    /// - Parameter resource: The requested path without the face's prefix and version, for 404 messages.
    init(_ error: VerityError, resource: String) {
        switch error.code {
        case .invalidPhoneNumber, .invalidEmail:
            self = .invalidParameter("To", error.detail)
        case .invalidCode:
            self = .invalidParameter("Code", error.detail)
        case .invalidLocale:
            self = .invalidParameter("Locale", error.detail)
        case .maxSendAttemptsReached:
            self.init(code: 60203, message: "Max send attempts reached", status: 429)
        case .maxCheckAttemptsReached:
            self.init(code: 60202, message: "Max check attempts reached", status: 429)
        case .rateLimited:
            self.init(code: 20429, message: "Too Many Requests", status: 429)
        case .channelDisabled:
            // Twilio's answer for a channel the service has not turned on (60223, "Delivery channel disabled").
            self.init(
                code: 60223, message: "Delivery channel disabled: \(error.detail ?? error.code.title)", status: 400)
        case .countryNotAllowed, .premiumRateNumber:
            self.init(
                code: 60605, message: "Verification delivery attempt blocked: \(error.detail ?? error.code.title)",
                status: 403)
        case .unauthorized:
            self = .authenticationFailed
        case .factorNotVerified:
            self.init(code: 60318, message: "Factor is not verified", status: 403)
        case .challengeExpired:
            self.init(code: 60323, message: "Challenge expired", status: 403)
        case .challengeAlreadyAnswered:
            self.init(code: 60322, message: "Challenge already responded", status: 403)
        case .invalidSignature, .wrongFactor:
            self = .challengeVerificationFailed
        case .factorLocked:
            self.init(code: 60310, message: "Max factor verification attempts reached", status: 429)
        case .methodNotAllowed:
            self.init(code: 20004, message: "Method not allowed", status: 405)
        // Every other code, by its HTTP status: Twilio has no code of its own for these.
        case .invalidRequest, .malformedJSON, .invalidPublicKey, .invalidLoginId, .invalidClaims, .invalidRole,
            .phoneNumberRequired,
            .tokenReplayed, .wrongCode, .invalidSession, .invalidRefreshToken, .refreshTokenReused,
            .userDisabled, .challengeDenied, .forbidden, .appVerificationRequired, .userVerificationRequired,
            .factorSuspended,
            .notFound, .verificationNotFound, .projectNotFound, .factorNotFound, .challengeNotFound, .userNotFound,
            .roleNotFound, .possessionNotFound,
            .conflict, .noVerifiedFactors, .loginIdTaken, .roleExists, .testNumberLimitReached, .noSecondFactor,
            .challengePending, .stepOutOfOrder,
            .possessionExpired,
            .payloadTooLarge,
            .unsupportedMediaType,
            .resendLimitReached, .retryLimitReached, .numberChangeLimitReached,
            .internalError, .serviceUnavailable:
            let status = error.code.httpStatus
            switch status {
            case 400: self.init(code: 60200, message: error.detail ?? error.code.title, status: 400)
            case 404: self = .notFound(resource)
            case 500...: self.init(code: 20000 + status, message: error.code.title, status: status)
            // Twilio's HTTP-level codes follow the status: 20403, 20409, 20413, 20415, ….
            default: self.init(code: 20000 + status, message: error.detail ?? error.code.title, status: status)
            }
        }
        retryAfter = error.retryAfter
    }

    init(code: Int, message: String, status: Int, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
    }

    private struct Body: Encodable {
        var code: Int
        var message: String
        var moreInfo: String
        var status: Int
    }

    /// The JSON response. A 401 carries the server's `Date` (Twilio's SDKs correct their clock from it).
    func response(now: Date) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == 401 {
            headers[.wwwAuthenticate] = #"Basic realm="Twilio API""#
            headers[.date] = now.formatted(TwilioJSON.httpDate)
        }
        let body = Body(
            code: code, message: message, moreInfo: "https://www.twilio.com/docs/errors/\(code)", status: status)
        let data = (try? TwilioJSON.encoder.encode(body)) ?? Data()
        return Response(
            status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
