import Foundation
import VerityCore

/// How much of the Auth emulator's admin side the Firebase face serves a project
/// (``ProjectSettings/firebaseEmulatorAdmin``).
public enum FirebaseEmulatorAdmin: String, Sendable, Codable, CaseIterable {
    /// None: firebase-admin needs the project's API key, and no code is listed.
    case off
    /// `Bearer owner`, and the pending codes of the project's test numbers only (their codes are fixed anyway).
    case testNumbers = "test_numbers"
    /// `Bearer owner`, and the pending codes of every number: live codes of real people, for a development server.
    case allNumbers = "all_numbers"
}
