import Foundation
import Observation
import Testing
import VerityCore
import VerityKit

/// Whether `withObservationTracking` reported a change of what `read` read, once, since it was made.
final class ObservedChange: @unchecked Sendable {
    // @unchecked Sendable: `fired` is only touched while holding `lock`.
    private let lock = NSLock()
    private var fired = false

    @MainActor
    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in lock.withLock { fired = true } }
    }

    var happened: Bool { lock.withLock { fired } }
}

@Suite("Observable state for the app's views")
@MainActor
struct ObservableStateTests {
    @Test("the session state follows sign-in, refresh, step-up and sign-out by the time each await returns")
    func sessionState() async throws {
        let harness = try SessionHarness()
        let state = harness.verity.state
        var observed = ObservedChange { _ = state.session }
        #expect(state.session == nil)
        #expect(!state.isSignedIn)

        let signedIn = try await harness.signIn()
        #expect(observed.happened)
        #expect(state.session == signedIn)
        #expect(state.user == SessionFixture.user)
        #expect(state.isSignedIn)

        observed = ObservedChange { _ = state.session }
        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        let refreshed = try await harness.verity.refresh()
        #expect(observed.happened)
        #expect(state.session == refreshed)

        try await harness.enqueue(try SessionFixture.auth(generation: 3, includesRefreshToken: false, acr: "mfa"))
        let steppedUp = try await harness.verity.completeStepUp(code: SessionFixture.code)
        #expect(state.session == steppedUp)
        #expect(state.session?.isSteppedUp == true)

        observed = ObservedChange { _ = state.user }
        await harness.enqueue(SessionFixture.noContent)
        await harness.verity.logout()
        #expect(observed.happened)
        #expect(state.session == nil)
        #expect(state.user == nil)
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
        let observed = ObservedChange { _ = state.verifiedFactors }
        #expect(state.factors.isEmpty)

        let (verified, _) = try await harness.enrollVerified()
        #expect(observed.happened)
        #expect(state.factors == [verified])
        #expect(state.verifiedFactors == [verified])

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
