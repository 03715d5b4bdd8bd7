import Foundation
import SQLKit

@testable import VerityServer

extension TestNode {
    /// Makes every `statement` (`INSERT`, `UPDATE` or `DELETE`) on a row of `table` fail, as a crash or a lost
    /// connection in the middle of a change would: the failure a multi-step change must leave no trace of.
    func injectFailure(of statement: String, on table: String, engine: TestEngine) async throws {
        try await verity.database.execute { sql in
            switch engine {
            case .sqlite, .sqliteFile:
                try await sql.raw(
                    """
                    CREATE TRIGGER injected_failure BEFORE \(unsafeRaw: statement) ON \(unsafeRaw: table)
                    BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                    """
                ).run()
            case .postgres:
                try await sql.raw(
                    """
                    CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql
                    AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$
                    """
                ).run()
                try await sql.raw(
                    """
                    CREATE TRIGGER injected_failure BEFORE \(unsafeRaw: statement) ON \(unsafeRaw: table)
                    FOR EACH ROW EXECUTE FUNCTION injected_failure()
                    """
                ).run()
            }
        }
    }

    /// Takes away the failure ``injectFailure(of:on:engine:)`` put on `table`.
    func removeInjectedFailure(on table: String, engine: TestEngine) async throws {
        try await verity.database.execute { sql in
            switch engine {
            case .sqlite, .sqliteFile: try await sql.raw("DROP TRIGGER injected_failure").run()
            case .postgres: try await sql.raw("DROP TRIGGER injected_failure ON \(unsafeRaw: table)").run()
            }
        }
    }
}
