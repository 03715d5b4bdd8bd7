import Foundation
import Logging
import VerityCore

/// A checked session token: the session and its user.
struct SessionAuth: Sendable {
    var session: SessionRecord
    var user: User
}
