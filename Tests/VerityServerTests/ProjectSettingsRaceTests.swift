import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// Settings changes made at the same time (two operators in the console, the CLI beside them) each keep their own
/// change: one never writes back the other's old value.
@Suite("Concurrent project settings changes")
struct ProjectSettingsRaceTests {
    /// One change per setting, each made by its own concurrent update.
    static let changes: [@Sendable (inout ProjectSettings) -> Void] = [
        { $0.codeLength = 8 }, { $0.codeLifetime = 300 }, { $0.sessionLifetime = 900 },
        { $0.refreshLifetime = 7 * 86_400 }, { $0.possessionLifetime = 600 }, { $0.possessionCodeLifetime = 60 },
        { $0.requiresAppVerification = true }, { $0.descopeCookies = true }, { $0.allowedCountries = ["US"] },
        { $0.unusualActivityResponse = .revokeSessions },
    ]

    @Test("Ten concurrent updates of ten different settings keep all ten", arguments: TestEngine.available)
    func concurrentUpdates(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let admin = node.verity.admin
        let id = node.project.id
        try await withThrowingTaskGroup(of: Void.self) { group in
            for change in Self.changes {
                group.addTask { _ = try await admin.updateProject(id: id, name: nil, settings: change) }
            }
            try await group.waitForAll()
        }
        var expected = ProjectSettings()
        for change in Self.changes { change(&expected) }
        #expect(try await admin.project(id: id).settings == expected)
        try await node.verity.database.close()
    }
}
