import CVeritySQLite
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import VaporCSQLite

/// What SQLite refused, with its own words and result code.
struct SQLiteStatementError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    static let closed = SQLiteStatementError(code: SQLITE_MISUSE, message: "the connection is closed")

    var description: String { "SQLite error \(code): \(message)" }
}
