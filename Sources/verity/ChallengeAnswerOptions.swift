import ArgumentParser
import Foundation
import VerityCore
import VerityKit

/// What `approve` and `deny` take: the challenge, the device state and the output format.
struct ChallengeAnswerOptions: ParsableArguments {
    @Argument(help: "The challenge id (chl_…), as `verity device challenges` lists it.") var id: String
    @OptionGroup var state: DeviceStateOptions
    @Flag(help: "Print JSON.") var json = false

    /// Approves or denies the challenge with the device key and prints the outcome.
    func answer(
        _ answer: ChallengeAnswer, userVerification: UserVerificationOutcome = .unavailable, reason: DenyReason? = nil
    ) async throws {
        let challenge = try await withEnrolledPhone(state, userVerification: userVerification) { phone, state in
            switch answer {
            case .approved: try await phone.push.approve(challengeId: id, factorId: state.factorId)
            case .denied: try await phone.push.deny(challengeId: id, factorId: state.factorId, reason: reason)
            }
        }
        if json { return try printJSON(challenge) }
        let verb = answer == .approved ? "Approved" : reason == nil ? "Denied" : "Denied (reported: this wasn't me)"
        print("\(verb) \(challenge.id): \(challenge.message)")
    }
}
