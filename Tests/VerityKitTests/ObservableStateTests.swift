import Foundation
import Observation
import Testing
import VerityCore
import VerityKit

/// Counts the changes `withObservationTracking` reports for what `read` reads, re-arming after each one.
@MainActor
final class ChangeCounter {
    private(set) var count = 0

    init(_ read: @escaping @MainActor () -> Void) {
        track(read)
    }

    /// Waits until `count` changes were reported, for at most five seconds.
    func waitFor(_ expected: Int) async throws {
        for _ in 0..<1000 where count < expected {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(count == expected)
    }

    private func track(_ read: @escaping @MainActor () -> Void) {
        withObservationTracking(read) {
            Task { @MainActor in
                self.count += 1
                self.track(read)
            }
        }
    }
}

@Suite("Observable state for the app's views")
@MainActor
struct ObservableStateTests {
    @Test("the session state follows sign-in, refresh, step-up and sign-out by the time each await returns")
    func sessionState() async throws {
        let harness = try SessionHarness()
        let state = harness.verity.state
        let changes = ChangeCounter { _ = state.session }
        #expect(state.session == nil)
        #expect(!state.isSignedIn)

        let signedIn = try await harness.signIn()
        #expect(state.session == signedIn)
        #expect(state.user == SessionFixture.user)
        #expect(state.isSignedIn)

        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        let refreshed = try await harness.verity.refresh()
        #expect(state.session == refreshed)

        try await harness.enqueue(try SessionFixture.auth(generation: 3, includesRefreshToken: false, acr: "mfa"))
        let steppedUp = try await harness.verity.completeStepUp(code: SessionFixture.code)
        #expect(state.session == steppedUp)
        #expect(state.session?.isSteppedUp == true)

        await harness.enqueue(SessionFixture.noContent)
        await harness.verity.logout()
        #expect(state.session == nil)
        #expect(state.user == nil)
        try await changes.waitFor(4)
    }

    @Test("a new instance's state shows the stored session before any call; another project's shows none")
    func restoredSessionState() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()

        #expect(try SessionHarness(store: harness.store).verity.state.session == session)
        #expect(try SessionHarness(store: harness.store, projectId: "prj_other").verity.state.session == nil)
    }

    @Test("the factor state follows enrollment, verification, forgetting and clearing")
    func factorState() async throws {
        let harness = try Harness()
        let state = harness.push.state
        let changes = ChangeCounter { _ = state.factors }
        #expect(state.factors.isEmpty)

        let (verified, _) = try await harness.enrollVerified()
        #expect(state.factors == [verified])
        #expect(state.verifiedFactors == [verified])
        try await changes.waitFor(2)

        let restarted = VerityPush(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL()), transport: RecordingTransport(),
            store: harness.store, installationMarker: TestInstallationMarker(present: true))
        #expect(restarted.state.factors == [verified])

        try await harness.push.forgetFactor(verified.id)
        #expect(state.factors.isEmpty)
        #expect(state.verifiedFactors.isEmpty)

        _ = try await harness.enrollVerified()
        try await harness.push.clearLocalStorage()
        #expect(state.factors.isEmpty)
    }

    @Test("after a reinstall that clears push state, the factor state is empty from the start")
    func reinstalledFactorState() async throws {
        let harness = try Harness()
        _ = try await harness.enrollVerified()

        let reinstalled = VerityPush(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL(), clearStorageOnReinstall: true),
            transport: RecordingTransport(), store: harness.store,
            installationMarker: TestInstallationMarker(present: false))
        #expect(reinstalled.state.factors.isEmpty)
        #expect(try await reinstalled.factors().isEmpty)
        #expect(reinstalled.state.factors.isEmpty)
    }
}
