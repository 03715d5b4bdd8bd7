import Foundation
import Testing
import VerityCore
import VerityKit

/// A phone running the customer's app: its own `VerityPush`, secure store and HTTP session, enrolled as a push factor.
struct Phone: Sendable {
    let push: VerityPush
    let factorId: String

    /// Enrolls and verifies a push factor for `userId`, with a token the app's backend obtained.
    static func enrolled(userId: String, on server: LiveServer) async throws -> Phone {
        let push = VerityPush(
            configuration: VerityConfiguration(baseURL: server.baseURL, appId: "com.example.app"),
            transport: URLSessionTransport(), store: InMemorySecureStore())
        let token = try await server.backend.enrollmentToken(userId: userId)
        let factor = try await push.createFactor(
            enrollmentToken: token, friendlyName: "Phone of \(userId)", pushPlatform: .apns, pushToken: "a1b2c3d4")
        #expect(factor.status == .unverified)
        #expect(factor.userId == userId)
        let verified = try await push.verifyFactor(factor.id)
        #expect(verified.isVerified)
        return Phone(push: push, factorId: factor.id)
    }

    func pending() async throws -> [DeviceChallenge] {
        try await push.pendingChallenges(factorId: factorId)
    }

    func challenge(_ id: String) async throws -> DeviceChallenge {
        try await push.getChallenge(id: id, factorId: factorId)
    }

    func approve(_ challengeId: String) async throws -> DeviceChallenge {
        try await push.approve(challengeId: challengeId, factorId: factorId)
    }

    func deny(_ challengeId: String) async throws -> DeviceChallenge {
        try await push.deny(challengeId: challengeId, factorId: factorId)
    }
}
