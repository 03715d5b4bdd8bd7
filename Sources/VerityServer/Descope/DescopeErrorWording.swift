import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// The Descope face's wording: every error in Descope's shape.
struct DescopeErrorWording: FaceErrorWording {
    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as DescopeError: error.response
        case let error as VerityError: DescopeError(error).response
        case let error as HTTPError:
            error.status.code == 404
                ? DescopeError(
                    status: 404, errorCode: "E011003", description: "Not found", message: "No such route."
                ).response
                : DescopeError.badRequest("The request is not valid.").response
        default: nil
        }
    }

    func internalError(to request: Request) -> Response {
        DescopeError(VerityError(.internalError)).response
    }
}
