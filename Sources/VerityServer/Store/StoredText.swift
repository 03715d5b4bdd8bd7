import VerityCore

/// The one rule every engine applies to text as it is bound to a statement.
///
/// PostgreSQL refuses U+0000 in text with an error, where SQLite would store it. Both engines refuse it, alike and
/// before the statement runs, as a 400 in the face's shape: no identifier, address or name Verity keeps has one, so
/// only a hostile or broken client sends it (`/v1/users/%00`, `"\u0000"` in JSON).
enum StoredText {
    static func check(_ text: String) throws {
        if text.utf8.contains(0) {
            throw VerityError(.invalidRequest, "Text in the request must not contain the NUL character (U+0000).")
        }
    }

    /// ``check(_:)`` for each string among `binds` (an optional String bound with a value casts to String too), for
    /// the statements that do not go through an engine's typed binding.
    static func check(_ binds: [any Encodable]) throws {
        for case let text as String in binds { try check(text) }
    }
}
