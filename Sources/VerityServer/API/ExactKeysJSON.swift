import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// A JSON object answered with its keys exactly as given (no case conversion), sorted, slashes unescaped: the
/// answers of the Descope and Firebase faces, whose SDKs read camelCase keys as their vendors write them.
struct ExactKeysJSON: ResponseGenerator {
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
