import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Proving the app before codes are sent")
struct AppVerificationTests {
    static let proofId = "apv_1750003600_q3f0p8ka1m2c9v7x"
    /// The silent push's payload, as the app receives it.
    static var silentPush: [AnyHashable: Any] {
        ["type": "verity.app_verification", "appVerificationId": proofId, "secret": "s3cret"]
    }

    @Test("refused for want of a proof, the session asks for one, waits for the silent push and sends again with it")
    func provesAndRetries() async throws {
        let harness = try SessionHarness(appVerificationTimeout: .seconds(5))
        let appVerification = try #require(harness.appVerification)
        await appVerification.setPushToken("a1b2c3d4", platform: .apns)
        await harness.enqueue(try Fixture.problem(.appVerificationRequired))
        try await harness.enqueue(
            AppVerificationStarted(id: Self.proofId, expiresAt: Fixture.now.addingTimeInterval(3600)), status: 202)
        try await harness.enqueue(SessionFixture.otpStarted())

        let started = Task { try await harness.verity.startOTP(loginId: SessionFixture.phoneNumber) }
        try await eventually { await harness.requests.count == 2 }
        #expect(appVerification.receiveNotification(Self.silentPush))
        #expect(try await started.value == SessionFixture.otpStarted())

        let refused = try await harness.request(0)
        #expect(refused.value(forHeader: AuthHeaders.appVerification) == nil)
        let asked = try await harness.request(1)
        #expect(asked.url == (try Fixture.url("/v1/auth/app-verification")))
        #expect(asked.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(
            try decodeBody(AppVerificationRequest.self, of: asked)
                == AppVerificationRequest(pushPlatform: .apns, pushToken: "a1b2c3d4", appId: "com.example.app"))
        let proven = try await harness.request(2)
        #expect(proven.url == (try Fixture.url("/v1/auth/otp/start")))
        #expect(proven.value(forHeader: AuthHeaders.appVerification) == "\(Self.proofId).s3cret")

        // The proof is kept for the next code, step-ups included.
        try await harness.signIn()
        try await harness.enqueue(StepUpStartResponse(method: .otp))
        _ = try await harness.verity.stepUp(method: .otp)
        let stepUp = try await harness.request(4)
        #expect(stepUp.url == (try Fixture.url("/v1/auth/stepup/start")))
        #expect(stepUp.value(forHeader: AuthHeaders.appVerification) == "\(Self.proofId).s3cret")
    }

    @Test("without a push token, or when no silent push comes in time, the refusal is the server's")
    func refusals() async throws {
        let harness = try SessionHarness(appVerificationTimeout: .milliseconds(50))
        await harness.enqueue(try Fixture.problem(.appVerificationRequired))
        let noToken = await #expect(throws: VerityKitError.self) {
            try await harness.verity.startOTP(loginId: SessionFixture.email)
        }
        #expect(noToken?.serverErrorCode == .appVerificationRequired)
        #expect(await harness.requests.count == 1)

        await harness.appVerification?.setPushToken("a1b2c3d4", platform: .apns)
        await harness.enqueue(try Fixture.problem(.appVerificationRequired))
        try await harness.enqueue(
            AppVerificationStarted(id: Self.proofId, expiresAt: Fixture.now.addingTimeInterval(3600)), status: 202)
        let noPush = await #expect(throws: VerityKitError.self) {
            try await harness.verity.startOTP(loginId: SessionFixture.email)
        }
        #expect(noPush?.serverErrorCode == .appVerificationRequired)
        #expect(await harness.requests.count == 3)
    }

    @Test("only app verification pushes are taken; a push that came early is kept until it is waited for")
    func notifications() async throws {
        let harness = try SessionHarness(appVerificationTimeout: .seconds(5))
        let appVerification = try #require(harness.appVerification)
        #expect(!appVerification.receiveNotification(["type": "verity.challenge", "challengeId": "chl_1"]))
        #expect(!appVerification.receiveNotification(["type": "verity.app_verification"]))

        await appVerification.setPushToken("fcm-token", platform: .fcm)
        await harness.transport.hold()
        await harness.enqueue(try Fixture.problem(.appVerificationRequired))
        try await harness.enqueue(
            AppVerificationStarted(id: Self.proofId, expiresAt: Fixture.now.addingTimeInterval(3600)), status: 202)
        try await harness.enqueue(SessionFixture.otpStarted())
        let started = Task { try await harness.verity.startOTP(loginId: SessionFixture.email) }
        try await eventually { await harness.transport.heldCount == 1 }
        // The push arrives before the server has even refused the first request.
        #expect(appVerification.receiveNotification(Self.silentPush))
        try await Task.sleep(for: .milliseconds(20))
        await harness.transport.release()
        #expect(try await started.value.verificationId == SessionFixture.verificationId)
    }
}
