import SQLKit

extension Database {
    /// The UTC day of a stored time (`created_at` and its kin, seconds since 1970), as days since 1970-01-01: the
    /// day the console's reports group by.
    func utcDay(of column: String) -> SQLQueryString {
        engine == .postgres
            ? "CAST(floor(\(unsafeRaw: column) / 86400) AS BIGINT)" : "CAST(\(unsafeRaw: column) / 86400 AS INTEGER)"
    }
}
