import Crypto
import Foundation
import Logging
import VerityCore

/// A signed-in browser: its session and the CSRF token its forms must carry.
struct ConsoleSession: Sendable {
    var record: ConsoleSessionRecord
    /// Derived from the session's cookie, so a page another site makes cannot know it.
    var csrfToken: String
}
