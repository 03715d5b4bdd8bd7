import Hummingbird

/// A face's own error type, for a face whose errors all come out in that one shape.
protocol FaceError: Error, Sendable {
    /// A Domain refusal in the face's words.
    init(_ error: VerityError)
    /// The answer to a route the face does not have.
    static var unknownRoute: Self { get }
    /// The answer to a request Hummingbird could not read (any HTTP error but a 404).
    static var unreadableRequest: Self { get }
    /// The face's 500, which says nothing about internals.
    static var internalError: Self { get }
    var response: Response { get }
}

/// The wording of a face that answers every error in its ``FaceError``: its own errors as they are, a Domain
/// refusal translated, an unmatched route as its not-found and any other HTTP error as its bad request.
struct FaceErrorShape<Shape: FaceError>: FaceErrorWording {
    func response(for error: any Error, to request: Request) -> Response? {
        switch error {
        case let error as Shape: error.response
        case let error as VerityError: Shape(error).response
        case let error as HTTPError: (error.status.code == 404 ? Shape.unknownRoute : Shape.unreadableRequest).response
        default: nil
        }
    }

    func internalError(to request: Request) -> Response {
        Shape.internalError.response
    }
}
