import Observation
import VerityCore

/// A ``VerityPush``'s factors on this device, readable synchronously on the main actor and observable.
///
/// It holds the stored factors from the moment the ``VerityPush`` is created, and follows every enrollment,
/// verification, update, deletion and clearing, on the main actor, before the `await` of a main-actor caller that
/// made the change returns.
@MainActor @Observable
public final class VerityPushState {
    /// The push factors enrolled on this device, oldest first.
    public internal(set) var factors: [PushFactor]

    /// The verified factors: those that can answer challenges.
    public var verifiedFactors: [PushFactor] { factors.filter(\.isVerified) }

    nonisolated init(factors: [PushFactor]) {
        _factors = factors
    }
}
