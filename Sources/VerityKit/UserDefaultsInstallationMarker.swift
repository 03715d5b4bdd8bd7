import Foundation

/// An ``InstallationMarker`` kept in `UserDefaults`, which the system deletes with the app.
public struct UserDefaultsInstallationMarker: InstallationMarker {
    /// The `UserDefaults` suite, or `nil` for the app's standard defaults.
    public let suiteName: String?
    /// The defaults key of the marker.
    public let key: String

    /// Creates a marker.
    ///
    /// - Parameters:
    ///   - suiteName: The suite, for example an app group shared with a notification extension, or `nil` for the
    ///     standard defaults.
    ///   - key: The defaults key.
    public init(suiteName: String? = nil, key: String = "io.verity.kit.installed") {
        self.suiteName = suiteName
        self.key = key
    }

    /// Whether the marker is set.
    public var isPresent: Bool {
        defaults.bool(forKey: key)
    }

    /// Sets the marker.
    public func setPresent() {
        defaults.set(true, forKey: key)
    }

    // UserDefaults is looked up on each use rather than stored, because it is not Sendable on every platform.
    private var defaults: UserDefaults {
        suiteName.flatMap { UserDefaults(suiteName: $0) } ?? .standard
    }
}
