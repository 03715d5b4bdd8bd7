import Foundation

/// The security event a device's report of unusual activity produces, as listed by `GET /v1/security-events` and sent
/// to the project's webhook as `security.unusual_activity_reported`.
public enum UnusualActivity {
    /// The ``SecurityEvent/type``.
    public static let eventType = "unusual_activity_reported"
}
