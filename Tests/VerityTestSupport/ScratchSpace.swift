import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where tests put their files: one directory per test process, `verity-tests/<pid>` in the system's temporary
/// directory, removed when the process exits.
///
/// A full run makes some 700 SQLite databases, about 400 MB; left behind, a few dozen runs fill a disk. A run that
/// was killed cannot clean up after itself, so the first use also removes the directories of processes that are gone.
public enum ScratchSpace {
    /// A new, empty directory whose name starts with `prefix`.
    public static func directory(_ prefix: String) -> URL {
        let directory = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// This process's directory.
    public static let root: URL = {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("verity-tests", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where !isRunning(name) {
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
        let own = parent.appendingPathComponent(String(getpid()), isDirectory: true)
        try? FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ScratchSpace.root) }
        return own
    }()

    /// Whether `name` is the id of a process that is running (or that this user may not signal, so it runs).
    static func isRunning(_ name: String) -> Bool {
        guard let pid = pid_t(name), pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
