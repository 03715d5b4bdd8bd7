import CVeritySQLite
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import VaporCSQLite

private struct SQLiteColumnKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A result row: the statement's column names (shared by its rows) and this row's values.
struct SQLiteResultRow: SQLRow {
    final class Columns: Sendable {
        let names: [String]
        let offsets: [String: Int]

        init(_ statement: OpaquePointer) {
            let names = (0..<sqlite_nio_sqlite3_column_count(statement)).map { column in
                sqlite_nio_sqlite3_column_name(statement, column).map { String(cString: $0) } ?? ""
            }
            self.names = names
            self.offsets = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    let columns: Columns
    let values: [SQLiteData]

    /// One decoder for every row: each `SQLiteDataDecoder()` allocates a `JSONDecoder`, once per column decoded.
    private static let decoder = SQLiteDataDecoder()

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.offsets[column] != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let offset = columns.offsets[column] else { return true }
        return values[offset] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offsets[column] else {
            throw DecodingError.keyNotFound(
                SQLiteColumnKey(stringValue: column),
                .init(codingPath: [], debugDescription: "The result has no column \(column)."))
        }
        return try Self.decoder.decode(D.self, from: values[offset])
    }
}
