import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import X509

/// What a test or an embedding program may replace. Everything defaults to the real thing.
public struct AppDependencies: Sendable {
    public var clock: any TimeSource = SystemTimeSource()
    public var random: any RandomSource = SystemRandomSource()
    public var logger: Logger?
    /// Replaces the senders the configuration names (tests record what would have been sent).
    public var senders: Senders?
    /// Replaces the database the configuration names (tests use `.sqliteMemory` or a fresh schema).
    public var database: DatabaseLocation?
    /// Replaces the master key file.
    public var masterKey: MasterKey?
    public var metrics: VerityMetrics?
    /// A carrier-based check apps may try before a possession code; none by default.
    public var silentPossession: (any SilentPossessionProvider)?
    /// The client the configured providers (Twilio, the SMS webhook, APNs, FCM) are called through; the shared
    /// one by default. Whoever passes one owns it and shuts it down.
    public var httpClient: HTTPClient?
    /// Replaces Apple's App Attestation Root CA as the one root App Attest chains must end at (tests make their own
    /// root; production always pins Apple's).
    public var appAttestRoots: [Certificate]?

    public init() {}
}
