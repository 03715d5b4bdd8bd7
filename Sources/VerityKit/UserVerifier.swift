import Foundation
import VerityCore

// The biometric policies are not on watchOS and tvOS: there, the default verifier reports `unavailable`.
#if canImport(LocalAuthentication) && !os(watchOS) && !os(tvOS)
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

/// What a ``UserVerifier`` gave for a signature: the outcome and, from the system's prompt, the evaluated context that
/// the user-verification key then signs with, so the owner is asked once.
public struct OwnerVerification: Sendable {
    /// What the owner did.
    public var outcome: UserVerificationOutcome
    /// The evaluated `LAContext`, handed to the Secure Enclave key as `kSecUseAuthenticationContext`.
    let authenticationContext: AuthenticationContext?

    /// A verification without a context to hand on: a Secure Enclave key then asks the system again.
    ///
    /// - Parameter outcome: What the owner did.
    public init(outcome: UserVerificationOutcome) {
        self.init(outcome: outcome, authenticationContext: nil)
    }

    init(outcome: UserVerificationOutcome, authenticationContext: AuthenticationContext?) {
        self.outcome = outcome
        self.authenticationContext = authenticationContext
    }
}

/// How the owner verified, as the system reports it: the policy that succeeded and the device's biometry.
enum VerifiedPolicy: Sendable, Equatable {
    /// Biometrics only (`deviceOwnerAuthenticationWithBiometrics`), by this kind of sensor.
    case biometrics(Biometry)
    /// Biometrics or the passcode (`deviceOwnerAuthentication`), after the owner chose the passcode or has no
    /// biometry: which one they used is not reported, so it counts as the passcode.
    case passcodeOrBiometrics

    /// `LABiometryType`.
    enum Biometry: Sendable, Equatable {
        case touchID
        case faceID
        case opticID
        case none
    }

    /// The `amr` signed with the answer: what the owner did, never more.
    var method: UserVerificationMethod {
        switch self {
        case .biometrics(.faceID): .face
        case .biometrics(.touchID): .fpt
        case .biometrics(.opticID): .iris
        case .biometrics(.none), .passcodeOrBiometrics: .pin
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

    /// Shows the prompt before a signature, and hands on what the signing key needs so the owner is asked once.
    ///
    /// The default calls ``verifyUser(reason:)`` and hands on nothing, so a Secure Enclave key asks the system again;
    /// VerityKit's own verifiers hand on the evaluated context.
    ///
    /// - Parameter reason: Why the app asks, shown in the prompt.
    /// - Returns: The outcome, with the context for the key.
    func verifyUserForSigning(reason: String) async -> OwnerVerification
}

extension UserVerifier {
    /// Calls ``verifyUser(reason:)`` and hands on no context.
    ///
    /// - Parameter reason: Why the app asks.
    /// - Returns: The outcome, without a context.
    public func verifyUserForSigning(reason: String) async -> OwnerVerification {
        OwnerVerification(outcome: await verifyUser(reason: reason))
    }
}

/// A ``UserVerifier`` that plays back outcomes given in advance, in order, and remembers every prompt: the "biometric
/// prompt" of tests and of the `verity device` simulator. With nothing left to play it answers ``fallback``.
// @unchecked Sendable: the only mutable state, `script`, `reasons` and `handedContexts`, is read and written only
// while holding `lock`.
public final class ScriptedUserVerifier: UserVerifier, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [UserVerificationOutcome]
    private var reasons: [String] = []
    private var handedContexts: [AuthenticationContext] = []
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
        await verifyUserForSigning(reason: reason).outcome
    }

    /// Plays the next outcome and, when it is a verification, hands on a new context (as the system prompt does), which
    /// `contexts` records.
    ///
    /// - Parameter reason: Why the app asks.
    /// - Returns: The next scripted outcome, or ``fallback``.
    public func verifyUserForSigning(reason: String) async -> OwnerVerification {
        lock.withLock {
            reasons.append(reason)
            let outcome = script.isEmpty ? fallback : script.removeFirst()
            guard case .verified = outcome else { return OwnerVerification(outcome: outcome) }
            let context = AuthenticationContext(NSObject())
            handedContexts.append(context)
            return OwnerVerification(outcome: outcome, authenticationContext: context)
        }
    }

    /// The contexts handed on by verifications so far, in order.
    var contexts: [AuthenticationContext] {
        lock.withLock { handedContexts }
    }
}

#if canImport(LocalAuthentication) && !os(watchOS) && !os(tvOS)
    /// The system's Face ID, Touch ID, Optic ID or passcode prompt (`LAContext`), for the Secure Enclave
    /// user-verification key.
    ///
    /// It evaluates biometrics alone first, so the answer can say which biometry the owner used; when they choose the
    /// passcode instead, or the device has no biometry, it evaluates `deviceOwnerAuthentication`, reported as `pin`.
    /// The evaluated context is handed to the key, which then signs without asking again.
    public struct LocalAuthenticationUserVerifier: UserVerifier {
        /// Creates the verifier.
        public init() {}

        /// Shows the prompt and reports what the owner did.
        ///
        /// - Parameter reason: Shown in the prompt.
        /// - Returns: The outcome.
        public func verifyUser(reason: String) async -> UserVerificationOutcome {
            await verifyUserForSigning(reason: reason).outcome
        }

        /// Shows the prompt and hands its evaluated context on to the key.
        ///
        /// - Parameter reason: Shown in the prompt.
        /// - Returns: The outcome and the context.
        public func verifyUserForSigning(reason: String) async -> OwnerVerification {
            let context = LAContext()
            var error: NSError?
            if context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) {
                do {
                    guard
                        try await context.evaluatePolicy(
                            .deviceOwnerAuthenticationWithBiometrics, localizedReason: reason)
                    else { return OwnerVerification(outcome: .failed) }
                    let policy = VerifiedPolicy.biometrics(Self.biometry(context.biometryType))
                    return OwnerVerification(
                        outcome: .verified(policy.method), authenticationContext: AuthenticationContext(context))
                } catch let error as LAError where error.code == .userFallback {
                    // The owner chose the passcode: go on below.
                } catch let error as LAError {
                    return OwnerVerification(outcome: Self.outcome(of: error))
                } catch {
                    return OwnerVerification(outcome: .failed)
                }
            }
            guard context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error) else {
                return OwnerVerification(outcome: .unavailable)
            }
            do {
                guard try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: reason) else {
                    return OwnerVerification(outcome: .failed)
                }
            } catch let error as LAError {
                return OwnerVerification(outcome: Self.outcome(of: error))
            } catch {
                return OwnerVerification(outcome: .failed)
            }
            return OwnerVerification(
                outcome: .verified(VerifiedPolicy.passcodeOrBiometrics.method),
                authenticationContext: AuthenticationContext(context))
        }

        private static func outcome(of error: LAError) -> UserVerificationOutcome {
            switch error.code {
            case .userCancel, .appCancel, .systemCancel, .userFallback: .cancelled
            case .authenticationFailed: .failed
            default: .unavailable
            }
        }

        private static func biometry(_ type: LABiometryType) -> VerifiedPolicy.Biometry {
            // Compared, not switched over: LABiometryType is a C enum that may grow.
            if type == .faceID { return .faceID }
            if type == .touchID { return .touchID }
            if type == .opticID { return .opticID }
            return .none
        }
    }
#endif

/// The verifier a ``VerityPush`` uses unless the app gives one: the system prompt where there is one; elsewhere one
/// that reports ``UserVerificationOutcome/unavailable``, so nothing is ever approved as verified by accident.
func defaultUserVerifier() -> any UserVerifier {
    #if canImport(LocalAuthentication) && !os(watchOS) && !os(tvOS)
        LocalAuthenticationUserVerifier()
    #else
        ScriptedUserVerifier()
    #endif
}
