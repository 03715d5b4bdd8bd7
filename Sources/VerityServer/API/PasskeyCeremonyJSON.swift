import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The JSON the browser pages' passkey script talks to (the console's passkey pages, the hosted passkey page): the
/// options, `{location}` once a ceremony is done, and `{code, message}` with the code's status on a refusal, which
/// the script shows with the code in `data-code`.
enum PasskeyCeremonyJSON {
    /// Where the page goes once a ceremony is done.
    struct Done: Encodable {
        var location: String
    }

    /// A refusal: its stable code and the reason.
    struct Refusal: Encodable {
        var code: String
        var message: String
    }

    /// `body`'s answer as JSON, or its refusal as `{code, message}` with the code's status.
    static func respond<Answer: Encodable>(_ body: () async throws -> Answer) async throws -> Response {
        let status: HTTPResponse.Status
        let data: Data
        do {
            data = try JSONEncoder().encode(try await body())
            status = .ok
        } catch let error as VerityError {
            status = HTTPResponse.Status(code: error.code.httpStatus)
            data = try JSONEncoder().encode(Refusal(code: error.code.rawValue, message: error.detail ?? ""))
        }
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The form's `credential` field: the standard JSON of a `PublicKeyCredential`.
    static func credential(in form: ConsoleForm) throws -> PublicKeyCredentialJSON {
        guard let text = form["credential"],
            let credential = try? JSONDecoder().decode(PublicKeyCredentialJSON.self, from: Data(text.utf8))
        else { throw VerityError(.invalidRequest, "The credential is not a PublicKeyCredential's JSON.") }
        return credential
    }
}
