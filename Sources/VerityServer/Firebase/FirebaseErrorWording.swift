import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// The Firebase face's wording: every error in Google's shape.
struct FirebaseErrorWording: FaceErrorWording {
    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as FirebaseError: error.response
        case let error as VerityError: FirebaseError(error).response
        case let error as HTTPError:
            error.status.code == 404
                ? FirebaseError(status: 404, message: "NOT_FOUND").response
                : FirebaseError.badRequest("INVALID_ARGUMENT").response
        default: nil
        }
    }

    func internalError(to request: Request) -> Response {
        FirebaseError(status: 500, message: "INTERNAL_ERROR").response
    }
}
