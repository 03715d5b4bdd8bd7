import Foundation
import SQLKit
import VerityCore

/// The hosted passkey page's single-use links.
struct PasskeyLinkStore: Sendable {
    let database: Database

    private static let columns =
        """
        id, project_id, user_id, ceremony, status, passkey_id, session_answer, created_at, expires_at, completed_at,
        answer_started_at
        """
    private static let table = RecordTable(
        name: "passkey_links", columns: columns, key: "id", scope: "project_id", record: link(from:))

    func insert(_ link: PasskeyLink, tokenHash: String) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO passkey_links (id, project_id, user_id, ceremony, token_hash, status, created_at, expires_at)
                VALUES (\(bind: link.id), \(bind: link.projectId), \(bind: link.userId), \(bind: link.ceremony.rawValue),
                        \(bind: tokenHash), \(bind: link.status.rawValue), \(bind: link.createdAt.storedValue),
                        \(bind: link.expiresAt.storedValue))
                """
            ).run()
        }
    }

    /// The link whose secret hashes to `tokenHash`, whatever its state.
    func link(tokenHash: String) async throws -> PasskeyLink? {
        try await database.execute { try await Self.table.find(where: "token_hash", is: tokenHash, on: $0) }
    }

    /// The project's link `id`.
    func link(id: String, projectId: String) async throws -> PasskeyLink? {
        try await database.execute { try await Self.table.find(id, in: projectId, on: $0) }
    }

    /// Moves an unexpired link that is pending, or whose answer outlived ``PasskeyLink/answerLease``, to `answering`
    /// as of `now`, so one answer at a time is checked; false for any other.
    func startAnswer(tokenHash: String, now: Date) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE passkey_links SET status = 'answering', answer_started_at = \(bind: now.storedValue)
                WHERE token_hash = \(bind: tokenHash) AND expires_at > \(bind: now.storedValue)
                    AND (status = 'pending'
                        OR (status = 'answering'
                            AND answer_started_at <= \(bind: now.addingTimeInterval(-PasskeyLink.answerLease).storedValue)))
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Ends the answer begun at `startedAt`: back to `pending` after a refusal (another try may follow), or
    /// `completed` with the passkey and, for a sign-in, the sealed session answer. In the caller's unit of work when
    /// given, so that a registration's passkey and its link's completion commit together. False when the answer no
    /// longer holds the link (its lease ran out and another answer took it).
    @discardableResult
    func finishAnswer(
        tokenHash: String, startedAt: Date, completed: Bool, passkeyId: String?, sealedSession: String?, now: Date,
        in work: UnitOfWork? = nil
    ) async throws -> Bool {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                UPDATE passkey_links
                SET status = \(bind: completed ? "completed" : "pending"), passkey_id = \(bind: passkeyId),
                    session_answer = \(bind: sealedSession),
                    completed_at = \(bind: completed ? now.storedValue : nil), answer_started_at = NULL
                WHERE token_hash = \(bind: tokenHash) AND status = 'answering'
                    AND answer_started_at = \(bind: startedAt.storedValue)
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Takes the sealed session answer out of the link `id`: it is cleared in the same statement, so only one read
    /// gets it.
    func takeSessionAnswer(id: String, projectId: String, sealed: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE passkey_links SET session_answer = NULL
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND session_answer = \(bind: sealed)
                RETURNING id
                """
            ).first() != nil
        }
    }

    private static func link(from row: any SQLRow) throws -> PasskeyLink {
        guard let ceremony = PasskeyLink.Ceremony(rawValue: try row.decode(column: "ceremony", as: String.self)),
            let status = PasskeyLink.Status(rawValue: try row.decode(column: "status", as: String.self))
        else { throw StoreError.corruptValue(column: "passkey_links.ceremony") }
        return PasskeyLink(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String?.self), ceremony: ceremony, status: status,
            passkeyId: try row.decode(column: "passkey_id", as: String?.self),
            sealedSession: try row.decode(column: "session_answer", as: String?.self),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            completedAt: try row.optionalDate("completed_at"),
            answerStartedAt: try row.optionalDate("answer_started_at"))
    }
}
