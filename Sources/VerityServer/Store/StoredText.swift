import VerityCore

/// The one rule every engine applies to text before it is bound to a statement.
enum StoredText {
    /// PostgreSQL refuses U+0000 in text with an error, where SQLite would store it. Both engines refuse it here,
    /// alike and before the statement runs, as a 400 in the face's shape: no identifier, address or name Verity
    /// keeps has one, so only a hostile or broken client sends it (`/v1/users/%00`, `"\u0000"` in JSON).
    static func refuseNUL(in binds: [any Encodable]) throws {
        for bind in binds {
            // An optional String bound with a value casts to String too.
            if let text = bind as? String, text.utf8.contains(0) {
                throw VerityError(.invalidRequest, "Text in the request must not contain the NUL character (U+0000).")
            }
        }
    }
}
