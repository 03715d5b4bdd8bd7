import Foundation
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// The native API's wording: every error as `application/problem+json` with a stable code.
struct ProblemWording: FaceErrorWording {
    let clock: any TimeSource

    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as VerityError: error.response(now: clock.now())
        case let error as HTTPError:
            VerityError(ErrorCode(genericFor: error.status.code), error.body).response(now: clock.now())
                .adding(error.headers)
        default: nil
        }
    }

    func internalError(to request: Request) -> Response {
        VerityError(.internalError).response(now: clock.now())
    }
}

extension Request {
    /// The path for a log line: a hosted instant-link path (`/p/{token}`) carries the link's secret, which is
    /// replaced by the route's name for it.
    var loggablePath: String {
        let path = uri.path
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 3, segments[0].isEmpty, segments[1] == "p" else { return path }
        return "/p/:token" + (segments.count > 3 ? "/" + segments[3...].joined(separator: "/") : "")
    }
}

extension VerityError {
    /// The problem+json response for this error. A 401 carries the server's `Date`, so a device whose clock
    /// is off can correct it and sign a token the server accepts.
    func response(now: Date) -> Response {
        var problem = Problem(code: code, detail: detail)
        problem.remainingAttempts = remainingAttempts
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        if code.httpStatus == 401 {
            headers[.wwwAuthenticate] = "Bearer"
            headers[.date] = now.formatted(Self.httpDate)
        }
        let data = (try? Self.encoder.encode(problem)) ?? Data()
        return Response(
            status: .init(code: code.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static let httpDate = Date.VerbatimFormatStyle(
        format:
            "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .padded(4)) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
        locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian))

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension Response {
    /// The response with `fields` added (an `HTTPError`'s `Allow`, for one).
    func adding(_ fields: HTTPFields) -> Response {
        var response = self
        response.headers.append(contentsOf: fields)
        return response
    }
}
