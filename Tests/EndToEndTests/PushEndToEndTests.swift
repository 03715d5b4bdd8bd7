import Foundation
import Testing
import VerityCore
import VerityKit

/// The push-approval flow as an app (VerityKit over URLSession) and a backend (the API key over HTTP) see it, against
/// a live server on a real socket.
@Suite("Push end to end")
struct PushEndToEndTests {
    @Test("Enroll, verify, challenge the user, approve: the backend sees who approved", arguments: TestEngine.available)
    func approve(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Phone.enrolled(userId: "user-1", on: server)
            let details = [ChallengeDetail(label: "IP", value: "203.0.113.7")]
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(userId: "user-1", message: "Sign in from Berlin?", details: details))
            #expect(created.status == .pending)
            #expect(created.factorId == nil)

            let pending = try await phone.pending()
            #expect(pending.map(\.id) == [created.id])
            let shown = try #require(pending.first)
            #expect(shown.factorId == phone.factorId)
            #expect(shown.message == "Sign in from Berlin?")
            #expect(shown.details == details)

            let answered = try await phone.approve(created.id)
            #expect(answered.status == .approved)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.respondedFactorId == phone.factorId)
            #expect(seen.respondedAt != nil)
            #expect(try await phone.pending().isEmpty)
        }
    }

    @Test("Deny: the backend sees denied", arguments: TestEngine.available)
    func deny(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Phone.enrolled(userId: "user-1", on: server)
            let created = try await server.backend.createChallenge(CreateChallengeRequest(userId: "user-1"))
            #expect(try await phone.pending().map(\.id) == [created.id])

            #expect(try await phone.deny(created.id).status == .denied)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .denied)
            #expect(seen.respondedFactorId == phone.factorId)
        }
    }

    @Test("An expired challenge cannot be approved: challenge_expired", arguments: TestEngine.available)
    func expired(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Phone.enrolled(userId: "user-1", on: server)
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(factorId: phone.factorId, expiresIn: 10))
            #expect(try await phone.pending().map(\.id) == [created.id])

            server.clock.advance(by: 11)
            let error = await #expect(throws: VerityKitError.self) { try await phone.approve(created.id) }
            #expect(error?.serverErrorCode == .challengeExpired)
            #expect(error?.problem?.status == 410)
            #expect(try await server.backend.challenge(id: created.id).status == .expired)
            #expect(try await phone.pending().isEmpty)
        }
    }

    @Test(
        "A second answer is refused with challenge_already_answered; the first one stands",
        arguments: TestEngine.available)
    func answeredTwice(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Phone.enrolled(userId: "user-1", on: server)
            let created = try await server.backend.createChallenge(CreateChallengeRequest(userId: "user-1"))
            #expect(try await phone.approve(created.id).status == .approved)

            let denial = await #expect(throws: VerityKitError.self) { try await phone.deny(created.id) }
            #expect(denial?.serverErrorCode == .challengeAlreadyAnswered)
            #expect(denial?.problem?.status == 409)
            let again = await #expect(throws: VerityKitError.self) { try await phone.approve(created.id) }
            #expect(again?.serverErrorCode == .challengeAlreadyAnswered)

            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.respondedFactorId == phone.factorId)
        }
    }

    /// Whose phone tries to answer a challenge meant for another.
    enum Intruder: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// The same user's other phone, when the backend challenged one factor by its id.
        case sameUsersOtherPhone
        /// Another user's phone, when the backend challenged the user.
        case otherUsersPhone

        var testDescription: String { rawValue }
    }

    @Test(
        "Another phone cannot see or answer a challenge meant for the first: wrong_factor",
        arguments: TestEngine.available, Intruder.allCases)
    func foreignPhone(engine: TestEngine, intruder: Intruder) async throws {
        try await LiveServer.run(engine) { server in
            let first = try await Phone.enrolled(userId: "user-1", on: server)
            let request: CreateChallengeRequest
            let second: Phone
            switch intruder {
            case .sameUsersOtherPhone:
                second = try await Phone.enrolled(userId: "user-1", on: server)
                request = CreateChallengeRequest(factorId: first.factorId)
            case .otherUsersPhone:
                second = try await Phone.enrolled(userId: "user-2", on: server)
                request = CreateChallengeRequest(userId: "user-1")
            }
            let created = try await server.backend.createChallenge(request)
            #expect(try await second.pending().isEmpty)

            let peek = await #expect(throws: VerityKitError.self) { try await second.challenge(created.id) }
            #expect(peek?.serverErrorCode == .wrongFactor)
            let stolen = await #expect(throws: VerityKitError.self) { try await second.approve(created.id) }
            #expect(stolen?.serverErrorCode == .wrongFactor)
            #expect(stolen?.problem?.status == 403)
            #expect(try await server.backend.challenge(id: created.id).status == .pending)

            #expect(try await first.approve(created.id).status == .approved)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.respondedFactorId == first.factorId)
        }
    }

    @Test("A backend long-polling the challenge learns of the approval at once", arguments: TestEngine.available)
    func longPoll(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Phone.enrolled(userId: "user-1", on: server)
            let created = try await server.backend.createChallenge(CreateChallengeRequest(userId: "user-1"))

            // A wait longer than any answer can take under load: returning well before it is the answer's doing.
            async let waited = server.backend.challenge(id: created.id, wait: 25)
            // Let the long poll reach the server and find the challenge still pending.
            try await Task.sleep(for: .milliseconds(300))
            let approvedAt = ContinuousClock.now
            #expect(try await phone.approve(created.id).status == .approved)
            let seen = try await waited
            #expect(ContinuousClock.now - approvedAt < .seconds(20))
            #expect(seen.status == .approved)
            #expect(seen.respondedFactorId == phone.factorId)
        }
    }
}
