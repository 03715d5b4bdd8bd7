import Foundation
import SQLKit

/// The Twilio face's Verify Passkeys records: the Verity user behind an entity's passkeys, passkey factors (`YF…`) and
/// passkey challenges (`YC…`). The passkeys and their ceremonies' challenges are the Domain's (``PasskeyService``).
struct TwilioPasskeyStore: Sendable {
    let database: Database

    /// Runs `body` as one unit of work.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    // MARK: Entities' users

    /// The Verity user of the entity `identity` of the service, if its passkeys have one yet.
    func userId(serviceSid: String, identity: String, in work: UnitOfWork? = nil) async throws -> String? {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                SELECT user_id FROM twilio_passkey_users
                WHERE service_sid = \(bind: serviceSid) AND identity = \(bind: identity)
                """
            ).first()?.decode(column: "user_id", as: String.self)
        }
    }

    /// Records the entity's user; false, and nothing written, when the entity has one already.
    func insertUser(serviceSid: String, identity: String, userId: String, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            INSERT INTO twilio_passkey_users (service_sid, identity, user_id)
            VALUES (\(bind: serviceSid), \(bind: identity), \(bind: userId))
            ON CONFLICT (service_sid, identity) DO NOTHING
            RETURNING user_id
            """
        ).first() != nil
    }

    // MARK: Factors

    private static let factorColumns = """
        sid, \(TwilioEntityAddress.columns), user_id, passkey_id, friendly_name, settings, created_at, updated_at
        """
    private static let factors = RecordTable(
        name: "twilio_passkey_factors", columns: factorColumns, key: "sid", scope: "service_sid",
        record: factor(from:))

    func insert(_ factor: TwilioPasskeyFactor) async throws {
        let settings = String(decoding: try JSONEncoder().encode(factor.settings), as: UTF8.self)
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO twilio_passkey_factors (\(unsafeRaw: Self.factorColumns))
                VALUES (\(bind: factor.sid), \(factor.entity.values), \(bind: factor.userId),
                        \(bind: factor.passkeyId), \(bind: factor.friendlyName), \(bind: settings),
                        \(bind: factor.createdAt.storedValue), \(bind: factor.updatedAt.storedValue))
                """
            ).run()
        }
    }

    /// The service's passkey factor `sid`.
    func factor(sid: String, serviceSid: String, in work: UnitOfWork? = nil) async throws -> TwilioPasskeyFactor? {
        try await database.execute(in: work) { try await Self.factors.find(sid, in: serviceSid, on: $0) }
    }

    /// Up to `limit` of the entity's passkey factors in creation order, after the factor `after`.
    func factors(serviceSid: String, identity: String, after: String?, limit: Int) async throws
        -> [TwilioPasskeyFactor]
    {
        try await database.execute { sql in
            try await Self.factors.page(
                in: serviceSid, filter: "AND identity = \(bind: identity)", after: after, limit: limit, on: sql)
        }
    }

    /// Deletes the service's passkey factor `sid`; false when there was none.
    func deleteFactor(sid: String, serviceSid: String, in work: UnitOfWork) async throws -> Bool {
        try await Self.factors.delete(sid, in: serviceSid, on: work.sql)
    }

    /// The factor of the passkey `passkeyId`.
    func factor(passkeyId: String, in work: UnitOfWork) async throws -> TwilioPasskeyFactor? {
        try await Self.factors.find(where: "passkey_id", is: passkeyId, on: work.sql)
    }

    /// Verifies the unverified factor `sid` with the passkey its registration made; false when it is verified already
    /// or gone.
    func verify(sid: String, passkeyId: String, now: Date, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            UPDATE twilio_passkey_factors
            SET passkey_id = \(bind: passkeyId), updated_at = \(bind: now.storedValue)
            WHERE sid = \(bind: sid) AND passkey_id IS NULL
            RETURNING sid
            """
        ).first() != nil
    }

    private static func factor(from row: any SQLRow) throws -> TwilioPasskeyFactor {
        let settings = try row.decode(column: "settings", as: String.self)
        guard let decoded = try? JSONDecoder().decode(PasskeySettings.self, from: Data(settings.utf8)) else {
            throw StoreError.corruptValue(column: "twilio_passkey_factors.settings")
        }
        return TwilioPasskeyFactor(
            sid: try row.decode(column: "sid", as: String.self),
            entity: try TwilioEntityAddress(row: row),
            userId: try row.decode(column: "user_id", as: String.self),
            passkeyId: try row.decode(column: "passkey_id", as: String?.self),
            friendlyName: try row.decode(column: "friendly_name", as: String.self), settings: decoded,
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    // MARK: Challenges

    private static let challengeColumns = """
        sid, \(TwilioEntityAddress.columns), factor_sid, status, expires_at, created_at, updated_at, responded_at
        """
    private static let challenges = RecordTable(
        name: "twilio_passkey_challenges", columns: challengeColumns, key: "sid", scope: "service_sid",
        record: challenge(from:))

    func insert(_ challenge: TwilioPasskeyChallenge) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO twilio_passkey_challenges (\(unsafeRaw: Self.challengeColumns))
                VALUES (\(bind: challenge.sid), \(challenge.entity.values), \(bind: challenge.factorSid),
                        \(bind: challenge.status), \(bind: challenge.expiresAt.storedValue),
                        \(bind: challenge.createdAt.storedValue), \(bind: challenge.updatedAt.storedValue),
                        \(bind: challenge.respondedAt?.storedValue))
                """
            ).run()
        }
    }

    /// The service's passkey challenge `sid`.
    func challenge(sid: String, serviceSid: String) async throws -> TwilioPasskeyChallenge? {
        try await database.execute { try await Self.challenges.find(sid, in: serviceSid, on: $0) }
    }

    /// Approves the pending challenge `sid` with the factor `factorSid`; false when it is not pending.
    func approve(sid: String, factorSid: String, now: Date, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            UPDATE twilio_passkey_challenges
            SET status = 'approved', factor_sid = \(bind: factorSid), responded_at = \(bind: now.storedValue),
                updated_at = \(bind: now.storedValue)
            WHERE sid = \(bind: sid) AND status = 'pending'
            RETURNING sid
            """
        ).first() != nil
    }

    private static func challenge(from row: any SQLRow) throws -> TwilioPasskeyChallenge {
        TwilioPasskeyChallenge(
            sid: try row.decode(column: "sid", as: String.self),
            entity: try TwilioEntityAddress(row: row),
            factorSid: try row.decode(column: "factor_sid", as: String?.self),
            status: try row.decode(column: "status", as: String.self), expiresAt: try row.date("expires_at"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            respondedAt: try row.optionalDate("responded_at"))
    }
}
