import Logging
import NIOCore
import PostgresKit
import PostgresNIO
import SQLKit

/// A PostgreSQL connection as the stores see it: SQLKit's, except that each statement is prepared once per
/// connection (a named statement, parsed and planned once) instead of parsed and planned again on every run.
///
/// PostgresNIO prepares a named statement the first time a connection runs it and keeps it for the connection's
/// life; its API names a statement by a type's static `name` and `sql`, so ``NamedStatement`` reads them from a task
/// local set around each run. The name is a hash of the SQL text and the types of its parameters, so one text bound
/// with other types (an absent optional, say) is a statement of its own. A statement with a parameter of any other
/// type than those ``PreparedBind`` knows runs the way SQLKit runs it, unprepared.
struct PreparingPostgresDatabase: SQLDatabase {
    let connection: PostgresConnection
    private let unprepared: any SQLDatabase

    init(_ connection: PostgresConnection) {
        self.connection = connection
        self.unprepared = connection.sql(queryLogLevel: nil)
    }

    var logger: Logger { connection.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var dialect: any SQLDialect { unprepared.dialect }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        do {
            try StoredText.check(serialize(query).binds)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return unprepared.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        var bindings = PostgresBindings(capacity: binds.count)
        var types: [PostgresDataType] = []
        types.reserveCapacity(binds.count)
        for bind in binds {
            guard let bind = bind as? any PreparedBind else {
                try StoredText.check(binds)
                return try await unprepared.execute(sql: query, onRow)
            }
            try bind.checkText()
            types.append(bind.append(to: &bindings))
        }
        var hasher = Hasher()
        hasher.combine(sql)
        for type in types { hasher.combine(type.rawValue) }
        let text = NamedStatement.Text(
            name: "v" + String(UInt64(bitPattern: Int64(hasher.finalize())), radix: 36), sql: sql, types: types)
        try await NamedStatement.$text.withValue(text) {
            for try await row in try await connection.execute(NamedStatement(bindings: bindings), logger: logger) {
                onRow(row.sql())
            }
        }
    }

    func withSession<R: Sendable>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    {
        try await closure(self)
    }
}

/// The statement PostgresNIO prepares: its name, text and parameter types are those of the run in progress.
private struct NamedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        var name: String
        var sql: String
        var types: [PostgresDataType]
    }

    @TaskLocal static var text = Text(name: "", sql: "", types: [])

    static var name: String { text.name }
    static var sql: String { text.sql }
    static var bindingDataTypes: [PostgresDataType] { text.types }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// A parameter value whose PostgreSQL type is known even when it is absent: what the stores bind.
private protocol PreparedBind: Sendable {
    /// Appends the value and returns its type.
    func append(to bindings: inout PostgresBindings) -> PostgresDataType
    /// Throws when the value is text PostgreSQL refuses (see ``StoredText``).
    func checkText() throws
}

extension PreparedBind {
    fileprivate func checkText() throws {}
}

extension PreparedBind where Self: PostgresNonThrowingEncodable {
    fileprivate func append(to bindings: inout PostgresBindings) -> PostgresDataType {
        bindings.append(self)
        return Self.psqlType
    }
}

extension String: PreparedBind {
    fileprivate func checkText() throws { try StoredText.check(self) }
}
extension Int: PreparedBind {}
extension Int64: PreparedBind {}
extension Double: PreparedBind {}
extension Bool: PreparedBind {}

extension Optional: PreparedBind where Wrapped: PreparedBind & PostgresNonThrowingEncodable {
    fileprivate func append(to bindings: inout PostgresBindings) -> PostgresDataType {
        guard let self else {
            bindings.appendNull()
            return Wrapped.psqlType
        }
        return self.append(to: &bindings)
    }

    fileprivate func checkText() throws { try self?.checkText() }
}
