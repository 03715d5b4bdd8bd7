import Foundation
import Hummingbird
import NIOCore

/// A Twilio request's parameters: the form-encoded body of a POST, or the query string of a GET.
///
/// Names are PascalCase and dotted for nested settings (`Totp.TimeStep`); a repeated name keeps every value;
/// unknown names are tolerated, as Twilio does.
struct TwilioForm: Sendable {
    private var values: [String: [String]] = [:]

    /// Parses `Name=value&…` (see ``URLEncodedForm``); a broken name or value is a 400.
    init(encoded: Substring) throws {
        for (name, value) in URLEncodedForm.pairs(encoded) {
            guard let name, !name.isEmpty else {
                throw TwilioError(code: 60200, message: "The form body is not valid", status: 400)
            }
            guard let value else {
                throw TwilioError.invalidParameter(name, "not valid percent-encoding")
            }
            values[name, default: []].append(value)
        }
    }

    /// The body of a POST, read up to the request body limit.
    static func body(of request: Request) async throws -> TwilioForm {
        try TwilioForm(encoded: Substring(String(buffer: try await request.collectBody())))
    }

    /// The query string of a GET.
    static func query(of request: Request) throws -> TwilioForm {
        try TwilioForm(encoded: Substring(request.uri.query ?? ""))
    }

    /// The first value of a parameter, if it was sent.
    func string(_ name: String) -> String? {
        values[name]?.first
    }

    /// Every value of a repeated parameter (`Details.Fields=…&Details.Fields=…`), in order.
    func strings(_ name: String) -> [String] {
        values[name] ?? []
    }

    func requiredString(_ name: String) throws -> String {
        guard let value = string(name), !value.isEmpty else { throw TwilioError.missingParameter(name) }
        return value
    }

    /// A whole number in `range`, if sent; anything else is `Invalid parameter`.
    /// A whole number, if sent; its bounds are the rule's that reads it.
    func integer(_ name: String) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw TwilioError.invalidParameter(name, "must be a whole number") }
        return value
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw TwilioError.invalidParameter(
                name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `true` or `false` (any case, as twilio-python sends them), if sent.
    func boolean(_ name: String) throws -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw TwilioError.invalidParameter(name, "must be true or false")
        }
    }
}
