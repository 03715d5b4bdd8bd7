import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// A console form's fields: the `application/x-www-form-urlencoded` body of a POST, or a GET's query.
struct ConsoleForm: Sendable {
    private var values: [String: String] = [:]

    init(encoded: Substring) {
        // A broken pair is passed over; a repeated name keeps its first value.
        for case (let name?, let value?) in URLEncodedForm.pairs(encoded) where values[name] == nil {
            values[name] = value
        }
    }

    /// The body of a POST, read up to the request body limit (a larger one is refused with 413).
    static func body(of request: Request) async throws -> ConsoleForm {
        ConsoleForm(encoded: Substring(String(buffer: try await request.collectBody())))
    }

    static func query(of request: Request) -> ConsoleForm {
        ConsoleForm(encoded: Substring(request.uri.query ?? ""))
    }

    /// A field, trimmed; nil only when the form does not have it (an emptied text field clears a value).
    func present(_ name: String) -> String? {
        values[name]?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A field, trimmed; nil when absent or empty.
    subscript(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
            return nil
        }
        return value
    }
}
