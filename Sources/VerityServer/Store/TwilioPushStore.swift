import Foundation
import SQLKit
import VerityCore

/// The Twilio face's Verify Push and TOTP records: entities, the Twilio side of factors, and access tokens. The
/// factors and challenges themselves are Verity's (``FactorService``, ``ChallengeService``); the lists below read their
/// tables in one joined `SELECT` each, never through their stores.
struct TwilioPushStore: Sendable {
    let database: Database

    // MARK: Entities

    /// Creates the entity unless it exists; either way returns it.
    func entity(creating entity: TwilioEntity) async throws -> TwilioEntity {
        try await database.transaction { sql in
            try await Self.insert(entity, in: sql)
            guard let stored = try await Self.entity(serviceSid: entity.serviceSid, identity: entity.identity, in: sql)
            else { throw StoreError.corruptValue(column: "twilio_entities") }
            return stored
        }
    }

    /// Creates the entity unless the identity has one in this service already.
    private static func insert(_ entity: TwilioEntity, in sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO twilio_entities (\(unsafeRaw: entities.columns))
            VALUES (\(bind: entity.serviceSid), \(bind: entity.identity), \(bind: entity.sid),
                    \(bind: entity.createdAt.storedValue), \(bind: entity.createdAt.storedValue))
            ON CONFLICT (service_sid, identity) DO NOTHING
            """
        ).run()
    }

    func entity(serviceSid: String, identity: String) async throws -> TwilioEntity? {
        try await database.lookupConfirmingMiss { sql in
            try await Self.entity(serviceSid: serviceSid, identity: identity, in: sql)
        }
    }

    private static func entity(serviceSid: String, identity: String, in sql: any SQLDatabase) async throws
        -> TwilioEntity?
    {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: entities.columns) FROM twilio_entities
            WHERE service_sid = \(bind: serviceSid) AND identity = \(bind: identity)
            """
        ).first().map(entity(from:))
    }

    /// Entities are found by their identity, and listed in the order of their `sid`s.
    private static let entities = RecordTable(
        name: "twilio_entities", columns: "service_sid, identity, sid, created_at, updated_at", key: "sid",
        scope: "service_sid", record: entity(from:))

    /// One page of the service's entities in creation order, starting after the entity `after` names.
    func entities(serviceSid: String, after: String?, limit: Int) async throws -> [TwilioEntity] {
        try await database.execute {
            try await Self.entities.page(in: serviceSid, after: after, limit: limit, on: $0)
        }
    }

    /// Runs `body` as one unit of work, for a change of Twilio records that Verity's factors join.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Deletes the entity in the caller's unit of work (its factors are unlinked beside it,
    /// ``unlinkFactors(serviceSid:identity:in:)``); false when there was none.
    func deleteEntity(serviceSid: String, identity: String, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            DELETE FROM twilio_entities WHERE service_sid = \(bind: serviceSid) AND identity = \(bind: identity)
            RETURNING sid
            """
        ).first() != nil
    }

    private static func entity(from row: any SQLRow) throws -> TwilioEntity {
        TwilioEntity(
            sid: try row.decode(column: "sid", as: String.self),
            serviceSid: try row.decode(column: "service_sid", as: String.self),
            identity: try row.decode(column: "identity", as: String.self),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    // MARK: Factors

    /// Records the Twilio side of a new factor, creating its entity if needed, in one transaction with its events.
    func link(_ link: TwilioFactorLink, entity: TwilioEntity, events: TwilioEventQueue) async throws {
        try await database.transaction { sql in
            try await Self.insert(entity, in: sql)
            try await sql.raw(
                """
                INSERT INTO twilio_factors (factor_id, service_sid, identity, totp_skew, updated_at)
                VALUES (\(bind: link.factorId), \(bind: link.serviceSid), \(bind: link.identity),
                        \(bind: link.totpSkew), \(bind: link.updatedAt.storedValue))
                """
            ).run()
            try await events.enqueue(in: sql)
        }
    }

    func link(factorId: String) async throws -> TwilioFactorLink? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT factor_id, service_sid, identity, totp_skew, updated_at
                FROM twilio_factors WHERE factor_id = \(bind: factorId)
                """
            ).first().map(Self.link(from:))
        }
    }

    /// One page of the entity's factors with their Twilio side, oldest first, starting after the factor `after`
    /// (a Verity id) names; only `factorId` when given (a device sees its own).
    func factors(
        serviceSid: String, identity: String, projectId: String, factorId: String?, after: String?, limit: Int
    ) async throws -> [(FactorRecord, TwilioFactorLink)] {
        try await database.execute { sql in
            let columns = qualified(FactorRecord.columns, by: "f")
            let only: SQLQueryString = factorId.map { "AND f.id = \(bind: $0)" } ?? ""
            let start = SQLQueryString.pageStart(
                after: after, table: "factors", key: "id", scope: "project_id", projectId)
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: columns), t.factor_id, t.service_sid, t.identity, t.totp_skew,
                       t.updated_at AS link_updated_at
                FROM twilio_factors t JOIN factors f ON f.id = t.factor_id
                WHERE t.service_sid = \(bind: serviceSid) AND t.identity = \(bind: identity)
                  AND f.project_id = \(bind: projectId) \(only) \(start)
                ORDER BY f.created_at, f.id LIMIT \(bind: limit)
                """
            ).all().map { row in
                (try FactorRecord(row: row), try Self.link(from: row, updatedColumn: "link_updated_at"))
            }
        }
    }

    /// Records that the factor changed now (Twilio's `date_updated`).
    func touchLink(factorId: String, now: Date) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE twilio_factors SET updated_at = \(bind: now.storedValue) WHERE factor_id = \(bind: factorId)
                """
            ).run()
        }
    }

    /// Deletes the Twilio side of the factor `id` in the caller's unit of work; returns the Verity factor ids it
    /// linked (the Verity factors go beside it).
    func unlinkFactor(id: String, in work: UnitOfWork) async throws -> [String] {
        try await unlinkFactors("factor_id = \(bind: id)", in: work)
    }

    /// ``unlinkFactor(id:in:)`` for every factor of the entity.
    func unlinkFactors(serviceSid: String, identity: String, in work: UnitOfWork) async throws -> [String] {
        try await unlinkFactors("service_sid = \(bind: serviceSid) AND identity = \(bind: identity)", in: work)
    }

    /// ``unlinkFactor(id:in:)`` for every factor of the service.
    func unlinkFactors(serviceSid: String, in work: UnitOfWork) async throws -> [String] {
        try await unlinkFactors("service_sid = \(bind: serviceSid)", in: work)
    }

    private func unlinkFactors(_ filter: SQLQueryString, in work: UnitOfWork) async throws -> [String] {
        try await work.sql.raw("DELETE FROM twilio_factors WHERE \(filter) RETURNING factor_id").all()
            .map { try $0.decode(column: "factor_id", as: String.self) }
    }

    private static func link(from row: any SQLRow) throws -> TwilioFactorLink {
        try link(from: row, updatedColumn: "updated_at")
    }

    private static func link(from row: any SQLRow, updatedColumn: String) throws -> TwilioFactorLink {
        TwilioFactorLink(
            factorId: try row.decode(column: "factor_id", as: String.self),
            serviceSid: try row.decode(column: "service_sid", as: String.self),
            identity: try row.decode(column: "identity", as: String.self),
            totpSkew: try row.decode(column: "totp_skew", as: Int?.self),
            updatedAt: try row.date(updatedColumn))
    }

    // MARK: Challenges

    /// One page of the entity's challenges (those of its factors in this service), filtered by factor and status,
    /// in creation order or the reverse, starting after the challenge `after` names.
    func challenges(
        serviceSid: String, identity: String, projectId: String, factorId: String?, status: ChallengeStatus?,
        descending: Bool, after: String?, limit: Int, now: Date
    ) async throws -> [ChallengeRecord] {
        try await database.execute { sql in
            let columns = qualified(ChallengeRecord.columns, by: "c")
            let factorFilter: SQLQueryString = factorId.map { "AND c.factor_id = \(bind: $0)" } ?? ""
            // A pending challenge past its expiry is expired before housekeeping marks it.
            let statusFilter: SQLQueryString =
                switch status {
                case nil: ""
                case .pending?: "AND c.status = 'pending' AND c.expires_at > \(bind: now.storedValue)"
                case .expired?:
                    """
                    AND (c.status = 'expired' OR (c.status = 'pending' AND c.expires_at <= \(bind: now.storedValue)))
                    """
                case let other?: "AND c.status = \(bind: other.rawValue)"
                }
            let order = descending ? "DESC" : "ASC"
            let comparison = descending ? "<" : ">"
            let start: SQLQueryString =
                if let after {
                    """
                    AND (c.created_at, c.id) \(unsafeRaw: comparison)
                        (SELECT created_at, id FROM challenges WHERE id = \(bind: after) AND project_id = \(bind: projectId))
                    """
                } else {
                    ""
                }
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: columns) FROM challenges c
                JOIN twilio_factors t ON t.factor_id = c.factor_id
                WHERE c.project_id = \(bind: projectId) AND t.service_sid = \(bind: serviceSid)
                  AND t.identity = \(bind: identity) \(factorFilter) \(statusFilter) \(start)
                ORDER BY c.created_at \(unsafeRaw: order), c.id \(unsafeRaw: order) LIMIT \(bind: limit)
                """
            ).all().map(ChallengeRecord.init(row:))
        }
    }

    // MARK: Access tokens

    func insert(_ token: TwilioAccessToken) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO twilio_access_tokens (\(unsafeRaw: Self.tokenColumns))
                VALUES (\(bind: token.sid), \(bind: token.projectId), \(bind: token.serviceSid), \(bind: token.identity),
                        \(bind: token.factorFriendlyName), \(bind: token.tokenHash), \(bind: token.ttl),
                        \(bind: token.createdAt.storedValue))
                """
            ).run()
        }
    }

    /// Deletes the service's access tokens in the caller's unit of work; returns the hashes of the enrollment tokens
    /// behind them.
    func deleteAccessTokens(serviceSid: String, projectId: String, in work: UnitOfWork) async throws -> [String] {
        try await work.sql.raw(
            """
            DELETE FROM twilio_access_tokens WHERE service_sid = \(bind: serviceSid) AND project_id = \(bind: projectId)
            RETURNING token_hash
            """
        ).all().map { try $0.decode(column: "token_hash", as: String.self) }
    }

    func accessToken(sid: String, serviceSid: String) async throws -> TwilioAccessToken? {
        try await database.lookupConfirmingMiss { try await Self.accessTokens.find(sid, in: serviceSid, on: $0) }
    }

    func accessToken(hash: String) async throws -> TwilioAccessToken? {
        try await database.lookupConfirmingMiss {
            try await Self.accessTokens.find(where: "token_hash", is: hash, on: $0)
        }
    }

    private static let tokenColumns =
        "sid, project_id, service_sid, identity, factor_friendly_name, token_hash, ttl, created_at"
    private static let accessTokens = RecordTable(
        name: "twilio_access_tokens", columns: tokenColumns, key: "sid", scope: "service_sid",
        record: accessToken(from:))

    private static func accessToken(from row: any SQLRow) throws -> TwilioAccessToken {
        TwilioAccessToken(
            sid: try row.decode(column: "sid", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            serviceSid: try row.decode(column: "service_sid", as: String.self),
            identity: try row.decode(column: "identity", as: String.self),
            factorFriendlyName: try row.decode(column: "factor_friendly_name", as: String?.self),
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            ttl: try row.decode(column: "ttl", as: Int.self), createdAt: try row.date("created_at"))
    }
}
