import Hummingbird
import Logging

/// The Twilio face's wording: every error as Twilio renders it (`{code, message, more_info, status}`).
struct TwilioErrorWording: FaceErrorWording {
    let clock: any TimeSource
    /// The face's path prefix and version (`/twilio/v2`), cut from paths in 404 messages.
    let pathPrefix: String

    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as TwilioError:
            return error.response(now: clock.now())
        case let error as VerityError:
            return TwilioError(error, resource: resource(request)).response(now: clock.now())
        case let error as HTTPError:
            let status = error.status.code
            let twilioError =
                switch status {
                case 400: TwilioError(code: 60200, message: error.body ?? "Bad Request", status: 400)
                case 401: TwilioError.authenticationFailed
                case 404: TwilioError.notFound(resource(request))
                default:
                    TwilioError(code: 20000 + status, message: error.body ?? error.status.reasonPhrase, status: status)
                }
            return twilioError.response(now: clock.now())
        default:
            return nil
        }
    }

    func internalError(to request: Request) -> Response {
        TwilioError(code: 20500, message: "Internal Server Error", status: 500).response(now: clock.now())
    }

    private func resource(_ request: Request) -> String {
        let path = request.uri.path
        return path.hasPrefix(pathPrefix) ? String(path.dropFirst(pathPrefix.count)) : path
    }
}
