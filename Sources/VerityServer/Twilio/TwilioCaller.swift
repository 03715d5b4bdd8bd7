import Foundation
import VerityCore

/// Who called a Verify Push route: the customer's backend (account or API key credentials), or a device with a JWT
/// signed by its factor's key.
enum TwilioCaller: Sendable {
    case backend
    case device(FactorRecord)
}
