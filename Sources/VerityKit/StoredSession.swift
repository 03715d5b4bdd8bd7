import Foundation
import VerityCore

/// A session as ``VeritySession`` keeps it in the ``SecureStore``: the server's answer, from which ``Session``
/// decodes its claims again when it is restored.
struct StoredSession: Codable, Equatable {
    var sessionJwt: String
    var refreshToken: String
    var user: User
    var sessionExpiresAt: Date
    var refreshExpiresAt: Date
    var firstSeen: Bool?

    init(_ session: Session) {
        sessionJwt = session.sessionJwt
        refreshToken = session.refreshToken
        user = session.user
        sessionExpiresAt = session.sessionExpiresAt
        refreshExpiresAt = session.refreshExpiresAt
        firstSeen = session.firstSeen
    }

    /// Reads a stored session.
    ///
    /// - Throws: When `data` is not a stored session.
    init(decoding data: Data) throws {
        self = try JSONDecoder().decode(Self.self, from: data)
    }

    /// The stored form. Dates keep their full precision (Foundation's default strategy), so a restored session
    /// equals the one stored.
    func encoded() throws -> Data {
        do {
            return try JSONEncoder().encode(self)
        } catch {
            throw VerityKitError.mapping("The session could not be encoded.")
        }
    }

    func session() throws -> Session {
        try Session(
            sessionJwt: sessionJwt, refreshToken: refreshToken, user: user, sessionExpiresAt: sessionExpiresAt,
            refreshExpiresAt: refreshExpiresAt, firstSeen: firstSeen ?? false)
    }
}
