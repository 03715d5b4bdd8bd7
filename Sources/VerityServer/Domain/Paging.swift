import VerityCore

/// How list endpoints page: `limit` items at most, and a `nextCursor` that names where the next page starts.
enum Paging {
    /// The page size a request asks for: `limit`, or `defaultLimit` when it names none.
    ///
    /// - Throws: `invalid_request` when `limit` is outside 1...`max`.
    static func limit(_ limit: Int?, defaultLimit: Int = 50, max: Int) throws -> Int {
        let limit = limit ?? defaultLimit
        guard (1...max).contains(limit) else {
            throw VerityError(.invalidRequest, "`limit` must be between 1 and \(max).")
        }
        return limit
    }

    /// Checks that `cursor`, when given, is an id of the listed kind (`prefix`, such as `fac_`) that this server
    /// could have given out as a `nextCursor`.
    ///
    /// - Throws: `invalid_request` otherwise.
    static func requireCursor(_ cursor: String?, prefix: String) throws {
        if let cursor, !(cursor.hasPrefix(prefix) && cursor.count <= 64) {
            throw VerityError(.invalidRequest, "`cursor` is not a cursor this server gave out.")
        }
    }
}

extension Page {
    /// A page of `fetched`, which holds up to one item more than `limit`: that one says there is a next page, which
    /// starts after the last item kept (its `cursor`).
    init(fetched: [Item], limit: Int, cursor: (Item) -> String?) {
        let items = Array(fetched.prefix(limit))
        self.init(items: items, nextCursor: fetched.count > limit ? items.last.flatMap(cursor) : nil)
    }
}
