import Testing
import VerityCore

@testable import VerityKit

@Suite("Possession errors and tokens")
struct PossessionErrorTests {
    @Test(
        "Server refusals map to the errors a possession UI shows",
        arguments: [
            (ErrorCode.resendLimitReached, PossessionError.resendLimitReached),
            (.retryLimitReached, .retryLimitReached), (.numberChangeLimitReached, .numberChangeLimitReached),
            (.possessionExpired, .expired), (.unauthorized, .expired), (.stepOutOfOrder, .alreadyFinished),
            (.invalidPhoneNumber, .invalidPhoneNumber), (.phoneNumberRequired, .invalidPhoneNumber),
            (.verificationNotFound, .codeExpired),
        ])
    func mapping(code: ErrorCode, expected: PossessionError) {
        #expect(PossessionError(.server(Problem(code: code))) == expected)
    }

    @Test("A wrong code carries the retries left; only some errors end the check")
    func wrongCode() {
        var problem = Problem(code: .wrongCode)
        problem.remainingAttempts = 2
        #expect(PossessionError(.server(problem)) == .wrongCode(retriesLeft: 2))
        #expect(!PossessionError.wrongCode(retriesLeft: 2).endsCheck)
        #expect(!PossessionError.resendLimitReached.endsCheck)
        #expect(PossessionError.retryLimitReached.endsCheck)
        #expect(PossessionError.expired.endsCheck)
        #expect(PossessionError(.network("down")) == .other(.network("down")))
    }

    @Test("The auth token names its flow")
    func correlationId() {
        #expect(StartedPossession.correlationId(inAuthToken: "vpt_pos_abc.secret") == "pos_abc")
        #expect(StartedPossession.correlationId(inAuthToken: "vpt_secret") == nil)
        #expect(StartedPossession.correlationId(inAuthToken: "vk_pos_abc.x") == nil)
    }
}
