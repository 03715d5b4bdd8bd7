import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import SQLiteKit

/// A statement or transaction begun after ``Database/close()``.
public struct DatabaseClosedError: Error, CustomStringConvertible {
    public var description: String { "The database is closed." }
}
