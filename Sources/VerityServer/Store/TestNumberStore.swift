import Foundation
import SQLKit
import VerityCore

/// A project's test phone numbers and their fixed codes.
struct TestNumberStore: Sendable {
    let database: Database
    /// Seals each fixed code at rest, bound to its project and number.
    let codes: SecretSealer

    /// Adds (or changes the code of) a test number, keeping the project at `limit` numbers or fewer; false when
    /// the number is new and the project has `limit` already.
    func upsert(_ number: TestPhoneNumber, projectId: String, limit: Int) async throws -> Bool {
        try await database.transaction { sql in
            if database.engine == .postgres {
                // Two concurrent adds must not both pass the count.
                try await sql.raw("SELECT id FROM projects WHERE id = \(bind: projectId) FOR UPDATE").run()
            }
            let updated = try await sql.raw(
                """
                UPDATE test_numbers SET code = \(bind: try sealed(number.code, phone: number.phoneNumber, projectId))
                WHERE project_id = \(bind: projectId) AND phone = \(bind: number.phoneNumber)
                RETURNING phone
                """
            ).first()
            if updated != nil { return true }
            let count =
                try await sql.raw(
                    "SELECT COUNT(*) AS n FROM test_numbers WHERE project_id = \(bind: projectId)"
                ).first(decodingColumn: "n", as: Int.self) ?? 0
            guard count < limit else { return false }
            try await sql.raw(
                """
                INSERT INTO test_numbers (project_id, phone, code, created_at)
                VALUES (\(bind: projectId), \(bind: number.phoneNumber),
                        \(bind: try sealed(number.code, phone: number.phoneNumber, projectId)),
                        \(bind: number.createdAt.storedValue))
                """
            ).run()
            return true
        }
    }

    func numbers(projectId: String) async throws -> [TestPhoneNumber] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT phone, code, created_at FROM test_numbers WHERE project_id = \(bind: projectId)
                ORDER BY phone
                """
            ).all().map { row in
                let phone = try row.decode(column: "phone", as: String.self)
                return TestPhoneNumber(
                    phoneNumber: phone,
                    code: try codes.openText(
                        try row.decode(column: "code", as: String.self), context: Self.context(phone, projectId)),
                    createdAt: try row.date("created_at"))
            }
        }
    }

    /// The fixed code of a test number, or nil when the number is not one.
    func code(phone: String, projectId: String) async throws -> String? {
        try await database.lookup { sql in
            try await sql.raw(
                "SELECT code FROM test_numbers WHERE project_id = \(bind: projectId) AND phone = \(bind: phone)"
            ).first(decodingColumn: "code", as: String.self).map {
                try codes.openText($0, context: Self.context(phone, projectId))
            }
        }
    }

    func delete(phone: String, projectId: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                DELETE FROM test_numbers WHERE project_id = \(bind: projectId) AND phone = \(bind: phone)
                RETURNING phone
                """
            ).first() != nil
        }
    }

    /// Seals the codes an older version stored in plain text; run at start-up, so an upgraded database keeps its
    /// test numbers and holds no readable code. Returns how many it sealed.
    @discardableResult
    func sealPlainCodes() async throws -> Int {
        try await database.execute { sql in
            let plain = try await sql.raw(
                """
                SELECT project_id, phone, code FROM test_numbers
                WHERE code NOT LIKE \(bind: SecretSealer.textPrefix + "%")
                """
            ).all().map { row in
                (
                    try row.decode(column: "project_id", as: String.self),
                    try row.decode(column: "phone", as: String.self), try row.decode(column: "code", as: String.self)
                )
            }
            for (projectId, phone, code) in plain {
                // Only if it is still that plain value: another node may be sealing it too.
                try await sql.raw(
                    """
                    UPDATE test_numbers SET code = \(bind: try sealed(code, phone: phone, projectId))
                    WHERE project_id = \(bind: projectId) AND phone = \(bind: phone) AND code = \(bind: code)
                    """
                ).run()
            }
            return plain.count
        }
    }

    private func sealed(_ code: String, phone: String, _ projectId: String) throws -> String {
        try codes.sealText(code, context: Self.context(phone, projectId))
    }

    private static func context(_ phone: String, _ projectId: String) -> String {
        "\(projectId) \(phone)"
    }
}
