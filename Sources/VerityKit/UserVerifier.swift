import Foundation
import VerityCore

#if canImport(LocalAuthentication)
    import LocalAuthentication
#endif

/// What asking the device's owner to verify gave.
public enum UserVerificationOutcome: Sendable, Equatable {
    /// The owner verified, by this method.
    case verified(UserVerificationMethod)
    /// The owner cancelled the prompt.
    case cancelled
    /// The owner was not recognised.
    case failed
    /// The device cannot verify its owner now (no biometry or passcode set, locked out).
    case unavailable

    /// The result reported to the server with the answer.
    public var result: UserVerificationResult {
        switch self {
        case .verified: .verified
        case .cancelled: .cancelled
        case .failed: .failed
        case .unavailable: .unavailable
        }
    }
}

/// Asks the device's owner to prove they are present (the biometric or passcode prompt) before the factor's
/// user-verification key signs.
///
/// On Apple platforms `LocalAuthenticationUserVerifier` shows the system prompt. Tests and platforms without one use
/// ``ScriptedUserVerifier``.
public protocol UserVerifier: Sendable {
    /// Shows the prompt and reports what the owner did.
    ///
    /// - Parameter reason: Why the app asks, shown in the prompt.
    /// - Returns: The outcome; never throws, so a failure is always reported.
    func verifyUser(reason: String) async -> UserVerificationOutcome
}

/// A ``UserVerifier`` that plays back outcomes given in advance, in order, and remembers every prompt: the "biometric
/// prompt" of tests and of the `verity device` simulator. With nothing left to play it answers ``fallback``.
// @unchecked Sendable: the only mutable state, `script` and `prompts`, is read and written only while holding `lock`.
public final class ScriptedUserVerifier: UserVerifier, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [UserVerificationOutcome]
    private var reasons: [String] = []
    /// What the prompt answers once the script is played out.
    public let fallback: UserVerificationOutcome

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - outcomes: The outcomes of the next prompts, in order.
    ///   - fallback: The outcome of every prompt after those.
    public init(_ outcomes: [UserVerificationOutcome] = [], fallback: UserVerificationOutcome = .unavailable) {
        self.script = outcomes
        self.fallback = fallback
    }

    /// Adds outcomes for the next prompts.
    ///
    /// - Parameter outcomes: The outcomes, in order.
    public func enqueue(_ outcomes: UserVerificationOutcome...) {
        lock.withLock { script += outcomes }
    }

    /// The reasons of every prompt shown so far, in order.
    public var prompts: [String] {
        lock.withLock { reasons }
    }

    /// Plays the next outcome.
    ///
    /// - Parameter reason: Why the app asks.
    /// - Returns: The next scripted outcome, or ``fallback``.
    public func verifyUser(reason: String) async -> UserVerificationOutcome {
        lock.withLock {
            reasons.append(reason)
            return script.isEmpty ? fallback : script.removeFirst()
        }
    }
}

#if canImport(LocalAuthentication)
    /// The system's Face ID, Touch ID or passcode prompt (`LAContext`), for the Secure Enclave user-verification key.
    public struct LocalAuthenticationUserVerifier: UserVerifier {
        /// Creates the verifier.
        public init() {}

        /// Evaluates `deviceOwnerAuthentication` and maps the result and the biometry type.
        ///
        /// - Parameter reason: Shown in the prompt.
        /// - Returns: The outcome.
        public func verifyUser(reason: String) async -> UserVerificationOutcome {
            let context = LAContext()
            var error: NSError?
            guard context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error) else { return .unavailable }
            do {
                guard try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: reason) else {
                    return .failed
                }
            } catch let error as LAError {
                switch error.code {
                case .userCancel, .appCancel, .systemCancel, .userFallback: return .cancelled
                case .authenticationFailed: return .failed
                default: return .unavailable
                }
            } catch {
                return .failed
            }
            switch context.biometryType {
            case .faceID: return .verified(.face)
            case .touchID: return .verified(.fpt)
            default: return .verified(.pin)
            }
        }
    }
#endif

/// The verifier a ``VerityPush`` uses unless the app gives one: the system prompt where there is one; elsewhere one
/// that reports ``UserVerificationOutcome/unavailable``, so nothing is ever approved as verified by accident.
func defaultUserVerifier() -> any UserVerifier {
    #if canImport(LocalAuthentication)
        LocalAuthenticationUserVerifier()
    #else
        ScriptedUserVerifier()
    #endif
}
