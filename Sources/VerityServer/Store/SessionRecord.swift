import Foundation
import SQLKit
import VerityCore

/// A stored session: one sign-in and its family of refresh tokens.
struct SessionRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var userId: String
    /// How the session was authenticated, in the order the factors were proven.
    var amr: [String]
    /// `mfa` after a step-up.
    var acr: String?
    /// When the last factor was proven.
    var authTime: Date
    var createdAt: Date
    /// When the session ends unless refreshed; each refresh moves it.
    var expiresAt: Date
    var revokedAt: Date?
    /// Claims the client asked for when it signed in or stepped up; every token of the session carries them.
    var claims: [String: JSONValue] = [:]
}
