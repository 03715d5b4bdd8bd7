import SQLKit

/// A table whose rows are one record type, each named by a key inside a scope (a webhook's `sid` in its service, a
/// flow's `id` in its project): the reads and the delete that every such table has, written once.
///
/// A store keeps one as a static and calls it inside its own ``Database`` call, so the store still chooses the
/// connection (a reader, or the writer for a list a client reads right after it wrote).
struct RecordTable<Record>: Sendable {
    /// The table's name.
    let name: String
    /// The columns a record is made from, as a `SELECT` list.
    let columns: String
    /// The unique column after `created_at` in a list's order: `id`, or a Twilio `sid`.
    let key: String
    /// The column that scopes a key: `project_id`, or a Twilio `service_sid`.
    let scope: String
    /// Makes a record of a row holding ``columns``.
    let record: @Sendable (any SQLRow) throws -> Record

    /// The record `key` names in `scope`, or nil.
    func find(_ key: String, in scope: String, on sql: any SQLDatabase) async throws -> Record? {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: name)
            WHERE \(unsafeRaw: self.key) = \(bind: key) AND \(unsafeRaw: self.scope) = \(bind: scope)
            """
        ).first().map(record)
    }

    /// The record whose `column` holds `value`, in any scope, or nil: a lookup by another unique column, such as a
    /// secret's hash.
    func find(where column: String, is value: String, on sql: any SQLDatabase) async throws -> Record? {
        try await sql.raw(
            "SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: name) WHERE \(unsafeRaw: column) = \(bind: value)"
        ).first().map(record)
    }

    /// Up to `limit` of the scope's records in creation order (newest first when asked), after the record `after`
    /// names (the last of the previous page); only those `filter` (`AND …`) keeps.
    func page(
        in scope: String, filter: SQLQueryString = "", after: String?, limit: Int, newestFirst: Bool = false,
        on sql: any SQLDatabase
    ) async throws -> [Record] {
        let start = SQLQueryString.pageStart(
            after: after, table: name, key: key, scope: self.scope, scope, newestFirst: newestFirst)
        let order = newestFirst ? "created_at DESC, \(key) DESC" : "created_at, \(key)"
        return try await sql.raw(
            """
            SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: name)
            WHERE \(unsafeRaw: self.scope) = \(bind: scope) \(filter) \(start)
            ORDER BY \(unsafeRaw: order) LIMIT \(bind: limit)
            """
        ).all().map(record)
    }

    /// Up to `limit` records of every scope, newest first, after the record `after` names; only those `filter`
    /// (`AND …`) keeps. For the console's lists over all projects.
    func newestOfAll(filter: SQLQueryString, after: String?, limit: Int, on sql: any SQLDatabase) async throws
        -> [Record]
    {
        let start: SQLQueryString =
            after.map {
                """
                AND (created_at, \(unsafeRaw: key)) <
                    (SELECT created_at, \(unsafeRaw: key) FROM \(unsafeRaw: name) WHERE \(unsafeRaw: key) = \(bind: $0))
                """
            } ?? ""
        return try await sql.raw(
            """
            SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: name) WHERE 1 = 1 \(filter) \(start)
            ORDER BY created_at DESC, \(unsafeRaw: key) DESC LIMIT \(bind: limit)
            """
        ).all().map(record)
    }

    /// Deletes the record `key` names in `scope`; false when there was none.
    func delete(_ key: String, in scope: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw(
            """
            DELETE FROM \(unsafeRaw: name) WHERE \(unsafeRaw: self.key) = \(bind: key) AND \(unsafeRaw: self.scope) = \(bind: scope)
            RETURNING \(unsafeRaw: self.key)
            """
        ).first() != nil
    }
}
