import Foundation
import SQLKit
import VerityCore

/// Timestamps are stored as seconds since 1970.
extension Date {
    var storedValue: Double { timeIntervalSince1970 }
}

extension SQLRow {
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try decode(column: column, as: Double.self))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try decode(column: column, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }

    /// A column that holds JSON text, or NULL.
    func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
        guard let text = try decode(column: column, as: String?.self) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError.corruptValue(column: column)
        }
    }

    func enumeration<T: RawRepresentable>(_ column: String, as type: T.Type) throws -> T where T.RawValue == String {
        let raw = try decode(column: column, as: String.self)
        guard let value = T(rawValue: raw) else {
            throw StoreError.corruptValue(column: column)
        }
        return value
    }
}

/// A value stored as JSON text, keys sorted so that equal values are stored alike.
func storedJSON(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// `columns` (a comma-separated list) qualified by a table's alias in a join: `id, name` as `p` is `p.id, p.name`.
func qualified(_ columns: String, by alias: String) -> String {
    columns.split(separator: ",").map { "\(alias)." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .joined(separator: ", ")
}

/// `columns` qualified by `alias` and renamed with `alias` and an underscore in front (`id, name` as `c` is
/// `c.id AS c_id, c.name AS c_name`), so that one row can carry two tables' columns of the same names; read them back
/// with ``PrefixedRow``.
func prefixed(_ columns: String, by alias: String) -> String {
    columns.split(separator: ",").map {
        let column = $0.trimmingCharacters(in: .whitespacesAndNewlines)
        return "\(alias).\(column) AS \(alias)_\(column)"
    }
    .joined(separator: ", ")
}

/// The columns of `row` that ``prefixed(_:by:)`` renamed for `alias`, under their own names.
struct PrefixedRow: SQLRow {
    let row: any SQLRow
    let prefix: String

    init(_ row: any SQLRow, alias: String) {
        self.row = row
        self.prefix = alias + "_"
    }

    var allColumns: [String] {
        row.allColumns.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    func contains(column: String) -> Bool { row.contains(column: prefix + column) }
    func decodeNil(column: String) throws -> Bool { try row.decodeNil(column: prefix + column) }
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        try row.decode(column: prefix + column, as: type)
    }
}
