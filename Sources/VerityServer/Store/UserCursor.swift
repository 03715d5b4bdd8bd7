import Foundation
import SQLKit
import VerityCore

/// A position in the newest-first list of users: the last user of the previous page.
struct UserCursor: Sendable, Equatable {
    var createdAt: Double
    var id: String
}
