import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// A whole-number query parameter (`limit`, `wait`), if given; anything else is a 400.
    func queryInteger(_ name: String) throws -> Int? {
        guard let text = uri.queryParameters[Substring(name)] else { return nil }
        guard let value = Int(String(text)) else {
            throw VerityError(.invalidRequest, "`\(name)` must be a whole number.")
        }
        return value
    }

    /// A list's `cursor` query parameter: where the page starts. An empty one asks for the first page, as a missing one
    /// does (a client that hands back the last page's `nextCursor` sends `cursor=` when there was none).
    var cursor: String? {
        uri.queryParameters["cursor"].flatMap { $0.isEmpty ? nil : String($0) }
    }

    /// Decodes the JSON body as `type` and answers `201 Created` with what `create` makes of it in the request's
    /// project: what every backend call that creates something does.
    func created<Body: Decodable, Created: ResponseEncodable>(
        _ type: Body.Type, context: VerityRequestContext, by create: (Body, Project) async throws -> Created
    ) async throws -> EditedResponse<Created> {
        let body = try await decodeJSON(type, context: context)
        return EditedResponse(status: .created, response: try await create(body, try context.requireProject()))
    }

    /// Decodes a JSON body, turning every way it can be wrong into a 4xx problem with a precise detail.
    ///
    /// - Parameter empty: What an empty body means, for endpoints whose fields are all optional; nil refuses it.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: VerityRequestContext, empty: T? = nil) async throws -> T {
        // Any declared type is read as JSON (curl's `-d` says form-urlencoded); only multipart is refused outright.
        if let contentType = headers[.contentType], contentType.lowercased().hasPrefix("multipart/") {
            throw VerityError(.unsupportedMediaType, "Send the body as application/json.")
        }
        let buffer = try await collectBody()
        guard buffer.readableBytes > 0 else {
            if let empty { return empty }
            throw VerityError(.invalidRequest, "The request needs a JSON body.")
        }
        do {
            return try JSONDecoder().decode(T.self, from: buffer)
        } catch let error as DecodingError {
            throw Self.problem(for: error)
        } catch {
            throw VerityError(.malformedJSON, "The body could not be read as JSON.")
        }
    }

    /// The whole body, up to `limit` bytes; a longer one (by its `Content-Length` or as it arrives) is a 413
    /// `payload_too_large`, which each face words in its own error shape.
    func collectBody(upTo limit: Int = RequestBodyLimit.bytes) async throws -> ByteBuffer {
        let tooLarge = VerityError(
            .payloadTooLarge,
            limit % (1024 * 1024) == 0
                ? "The body must be at most \(limit / 1024 / 1024) MiB."
                : "The body must be at most \(limit / 1024) KiB.")
        if let length = headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
    }

    private static func problem(for error: DecodingError) -> VerityError {
        func field(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "The body"
                : "`"
                    + path.map { $0.intValue.map(String.init) ?? $0.stringValue }
                    .joined(separator: ".") + "`"
        }
        switch error {
        case .keyNotFound(let key, let context):
            return VerityError(.invalidRequest, "\(field(context.codingPath + [key])) is required.")
        case .typeMismatch(let type, let context):
            return VerityError(.invalidRequest, "\(field(context.codingPath)) must be \(describe(type)).")
        case .valueNotFound(let type, let context):
            return VerityError(.invalidRequest, "\(field(context.codingPath)) must be \(describe(type)), not null.")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return VerityError(.malformedJSON, "The body is not valid JSON.")
            }
            if let refusal = context.wireEnumRefusal {
                return VerityError(.invalidRequest, "\(field(context.codingPath)) \(refusal).")
            }
            return VerityError(.invalidRequest, "\(field(context.codingPath)) has a value that is not allowed.")
        @unknown default:
            return VerityError(.invalidRequest, "The body does not have the expected shape.")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}
