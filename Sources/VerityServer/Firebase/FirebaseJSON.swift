import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// A JSON answer with the exact keys Google's APIs use.
struct FirebaseJSON: ResponseGenerator {
    var fields: [String: JSONValue]

    init(_ fields: [String: JSONValue]) {
        self.fields = fields
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=UTF-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(fields))))
    }
}
