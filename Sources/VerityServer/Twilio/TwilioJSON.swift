import Foundation
import Hummingbird
import NIOCore
import VerityCore

/// How the Twilio face writes JSON: snake_case keys, dates as `2015-07-30T20:00:00Z` (UTC, no fraction: Twilio's
/// SDKs fail on other shapes), and `null` where Twilio sends one.
enum TwilioJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(dateFormat))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let dateFormat = Date.VerbatimFormatStyle(
        format:
            "\(year: .padded(4))-\(month: .twoDigits)-\(day: .twoDigits)T\(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)Z",
        locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian))

    /// RFC 1123, for the `Date` header.
    static let httpDate = Date.VerbatimFormatStyle(
        format:
            "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .padded(4)) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
        locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian))

    /// Encodes JSON values as they are: the keys of a customer's `metadata` or `hidden_details` keep their case.
    static let plainEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A value as JSON, through the snake_case encoder.
    static func value(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(value))
    }

    static func date(_ date: Date) -> JSONValue {
        .string(date.formatted(dateFormat))
    }

    /// A response whose body is built as JSON values.
    static func response(object: [String: JSONValue], status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try plainEncoder.encode(object))))
    }

    /// A JSON response with `status`.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
