import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The console's wording for errors: an HTML page with the reason and the status, never a stack or a secret.
struct ConsoleWording: FaceErrorWording {
    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as VerityError:
            page(error.detail ?? error.code.rawValue, status: error.code.httpStatus)
        case let error as ConfigurationError:
            page(error.description, status: 400)
        case let error as HTTPError:
            page(error.body ?? "The request was refused.", status: Int(error.status.code))
        default: nil
        }
    }

    func internalError(to request: Request) -> Response {
        page("Something went wrong on the server. The server log has the details.", status: 500)
    }

    private func page(_ message: String, status: Int) -> Response {
        ConsoleHTML.page(
            "Not done",
            #"<p class="error" role="alert">\#(ConsoleHTML.escape(message))</p><p><a href="/console">Back to the dashboard</a></p>"#,
            status: HTTPResponse.Status(code: status))
    }
}
