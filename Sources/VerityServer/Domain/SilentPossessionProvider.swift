import Foundation
import Logging
import VerityCore

/// A carrier-based ("silent") check that a request comes from the phone holding a number, tried before a code.
///
/// Commercial products ask the mobile operator whether the data session belongs to the number. Verity ships no
/// implementation: add one with ``AppDependencies/silentPossession`` and apps may call
/// `POST /v1/possession/{id}/silent` before falling back to a code. Answer `true` only when the operator confirmed
/// the number, `false` when it did not (the app then uses a code); throw when it could not tell.
public protocol SilentPossessionProvider: Sendable {
    /// Whether the operator confirms that the client at `clientAddress` holds `phoneNumber` (E.164).
    func confirms(phoneNumber: String, clientAddress: String?) async throws -> Bool
}
