import ArgumentParser
import Foundation
import VerityCore
import VerityKit

/// The simulated phone: VerityKit's ``VerityPush`` over an encrypted store in the state directory.
struct SimulatedPhone {
    let directory: URL
    let push: VerityPush

    /// - Parameter userVerification: What the simulated biometric prompt answers: `--uv` makes the owner verify by
    ///   face; without it the phone has no one to ask, so the prompt is `unavailable`.
    init(
        directory: URL, server: URL, verbose: Bool, userVerification: UserVerificationOutcome = .unavailable
    ) {
        self.directory = directory
        self.push = VerityPush(
            configuration: VerityConfiguration(baseURL: server),
            store: EncryptedFileSecureStore(directory: directory),
            logger: verbose ? .standardError(minimumLevel: .debug) : .disabled,
            // The point of the simulated phone is that its key lives in the state directory; its user-verification
            // key too, which only a simulator may do.
            allowsSecureEnclave: false,
            userVerifier: ScriptedUserVerifier(fallback: userVerification),
            allowsSoftwareUserVerificationKeysForTesting: true)
    }
}
