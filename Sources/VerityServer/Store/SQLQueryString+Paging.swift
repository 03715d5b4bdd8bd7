import SQLKit

extension SQLQueryString {
    /// `AND (created_at, id) > (…)`: where a keyset page starts, after the row `after` names (in the same scope);
    /// nothing for the first page. With `newestFirst`, the list runs backwards and the page starts below that row.
    ///
    /// - Parameter key: The table's unique column after `created_at` in the list's order (`id`, or a Twilio `sid`).
    static func pageStart(
        after: String?, table: String, key: String, scope column: String, _ scope: String, newestFirst: Bool = false
    ) -> SQLQueryString {
        guard let after else { return "" }
        return """
            AND (created_at, \(unsafeRaw: key)) \(unsafeRaw: newestFirst ? "<" : ">")
                (SELECT created_at, \(unsafeRaw: key) FROM \(unsafeRaw: table)
                 WHERE \(unsafeRaw: key) = \(bind: after) AND \(unsafeRaw: column) = \(bind: scope))
            """
    }

}
