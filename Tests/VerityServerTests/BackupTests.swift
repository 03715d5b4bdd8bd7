import Foundation
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Backups")
struct BackupTests {
    @Test("A backup taken while the node writes is a working database with the same data, readable by its owner only")
    func sqliteCopy() async throws {
        let node = try await TestNode.make(.sqliteFile)
        let backup = ScratchSpace.root.appendingPathComponent(
            "verity-backup-\(UUID().uuidString)/verity.sqlite"
        ).path
        try FileManager.default.createDirectory(
            atPath: (backup as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let user = try await node.verity.users.create(
            CreateUserRequest(loginIds: ["+14155550100"], displayName: "Ada"), in: node.project)
        // Writes go on while the copy is taken; the copy holds at least what was committed before it started.
        async let writes: Void = {
            for index in 0..<20 {
                _ = try await node.verity.users.create(
                    CreateUserRequest(loginIds: ["user\(index)@example.com"]), in: node.project)
            }
        }()
        try await node.verity.database.backUp(to: backup)
        try await writes
        try await node.verity.database.close()

        let mode = try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let restored = try await TestNode.make(.sqliteFile, location: .sqliteFile(path: backup))
        let found = try await restored.verity.users.user(id: user.id, in: node.project)
        #expect(found.displayName == "Ada")
        #expect(try await restored.verity.admin.findProject(id: node.project.id)?.name == "Acme")
        try await restored.verity.database.close()
    }

    @Test("A backup never overwrites a file, and PostgreSQL is left to pg_dump", arguments: TestEngine.available)
    func refusals(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let existing = ScratchSpace.root.appendingPathComponent(
            "verity-backup-\(UUID().uuidString).sqlite"
        ).path
        #expect(FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8)))
        await #expect(throws: ConfigurationError.self) { try await node.verity.database.backUp(to: existing) }
        #expect(FileManager.default.contents(atPath: existing) == Data("keep".utf8))
        if engine == .postgres {
            let fresh = existing + ".new"
            await #expect(throws: ConfigurationError.self) { try await node.verity.database.backUp(to: fresh) }
            #expect(!FileManager.default.fileExists(atPath: fresh))
        }
        try await node.verity.database.close()
    }
}
