import ArgumentParser
import Foundation
import VerityServer

/// `verity admin backup`: a consistent copy of the SQLite database, taken while the server runs.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database to a new file while the server runs.",
        discussion: """
            The copy is a consistent snapshot of the last commit, readable by its owner only. Its secrets (TOTP \
            secrets, signing keys, webhook secrets, test numbers' codes) stay sealed with the master key: keep a \
            copy of the key (master.key in the data directory, or VERITY_MASTER_KEY) apart from the backups. To \
            restore, stop the server, put the copy in place of verity.sqlite, delete verity.sqlite-wal and \
            verity.sqlite-shm, and start it with the same master key. On PostgreSQL, use pg_dump instead.
            """)
    @Argument(help: "The file to write; it must not exist.") var output: String
    @OptionGroup var storage: StorageOptions

    func run() async throws {
        try await withVerity(storage) { try await $0.database.backUp(to: output) }
        let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        print("Backed up to \(output) (\(size) bytes). Keep the master key too: the backup is sealed with it.")
    }
}
