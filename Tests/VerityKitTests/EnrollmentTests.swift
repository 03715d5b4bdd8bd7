import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Enrolling a push factor")
struct EnrollmentTests {
    @Test("createFactor registers a fresh P-256 key with the enrollment token")
    func createFactorSendsTheEnrollment() async throws {
        let harness = try Harness()
        await harness.transport.enqueue(
            try Fixture.json(
                EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))

        let factor = try await harness.push.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "  Ada's phone ", pushPlatform: .apns,
            pushToken: Fixture.pushToken)

        let request = try await harness.request(0)
        #expect(request.method == .post)
        #expect(request.url == (try Fixture.url("/v1/device/factors")))
        #expect(request.value(forHeader: "authorization") == "Bearer \(Fixture.enrollmentToken)")
        #expect(request.value(forHeader: "Content-Type") == "application/json")
        let body = try decodeBody(CreatePushFactorRequest.self, of: request)
        #expect(body.friendlyName == "Ada's phone")
        #expect(body.pushPlatform == .apns)
        #expect(body.pushToken == Fixture.pushToken)
        #expect(body.appId == "com.example.app")
        #expect(body.sdkVersion == VerityConfiguration.sdkVersion)
        _ = try P256.Signing.PublicKey(derBase64: body.publicKey)

        #expect(factor.id == Fixture.factorId)
        #expect(factor.userId == "user-1")
        #expect(factor.status == .unverified)
        #expect(factor.pushToken == Fixture.pushToken)
        #expect(try await harness.push.factors() == [factor])
    }

    @Test("verifyFactor signs the nonce with the enrolled key, then forgets the enrollment token")
    func verifyFactorSignsTheNonce() async throws {
        let harness = try Harness()
        await harness.transport.enqueue(
            try Fixture.json(
                EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))
        await harness.transport.enqueue(try Fixture.json(Fixture.factor(status: .verified)))
        _ = try await harness.push.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .apns,
            pushToken: Fixture.pushToken)
        let tokenBytes = Data(Fixture.enrollmentToken.utf8)
        #expect(harness.store.allItems.values.contains { $0.range(of: tokenBytes) != nil })

        let factor = try await harness.push.verifyFactor(Fixture.factorId)

        let enrollment = try decodeBody(CreatePushFactorRequest.self, of: try await harness.request(0))
        let key = try P256.Signing.PublicKey(derBase64: enrollment.publicKey)
        let request = try await harness.request(1)
        #expect(request.method == .post)
        #expect(request.url == (try Fixture.url("/v1/device/factors/\(Fixture.factorId)/verify")))
        #expect(request.value(forHeader: "Authorization") == "Bearer \(Fixture.enrollmentToken)")
        let proof = try CompactJWS(parsing: try decodeBody(VerifyPushFactorRequest.self, of: request).signature)
        #expect(proof.isValidSignature(for: key))
        #expect(proof.header.kid == Fixture.factorId)
        #expect(
            try proof.decodePayload(FactorProof.self) == FactorProof(factorId: Fixture.factorId, nonce: Fixture.nonce))

        #expect(factor.status == .verified)
        #expect(factor.isVerified)
        #expect(factor.verifiedAt == Fixture.now)
        #expect(try await harness.push.factors() == [factor])
        #expect(!harness.store.allItems.values.contains { $0.range(of: tokenBytes) != nil })

        // Verifying again is a no-op that needs no token.
        #expect(try await harness.push.verifyFactor(Fixture.factorId) == factor)
        #expect(await harness.transport.requests.count == 2)
    }

    @Test("a refused enrollment leaves no key and no record behind")
    func refusedEnrollmentCleansUp() async throws {
        let harness = try Harness()
        await harness.transport.enqueue(try Fixture.problem(.unauthorized))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.createFactor(
                enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .none,
                pushToken: nil)
        }
        #expect(error?.serverErrorCode == .unauthorized)
        #expect(harness.store.allItems.isEmpty)
        #expect(try await harness.push.factors().isEmpty)
    }

    @Test("invalid arguments are refused before anything is sent")
    func invalidArguments() async throws {
        let harness = try Harness()
        let missingPushToken = await #expect(throws: VerityKitError.self) {
            try await harness.push.createFactor(
                enrollmentToken: Fixture.enrollmentToken, friendlyName: "Phone", pushPlatform: .fcm, pushToken: nil)
        }
        #expect(missingPushToken?.code == "input")
        let emptyToken = await #expect(throws: VerityKitError.self) {
            try await harness.push.createFactor(
                enrollmentToken: "", friendlyName: "Phone", pushPlatform: .none, pushToken: nil)
        }
        #expect(emptyToken?.code == "input")
        let unknownFactor = await #expect(throws: VerityKitError.self) {
            try await harness.push.verifyFactor("fac_unknown")
        }
        #expect(unknownFactor?.code == "input")
        #expect(await harness.transport.requests.isEmpty)
        #expect(harness.store.allItems.isEmpty)
    }

    @Test("updateFactor sends the new push token and keeps it locally")
    func updateFactor() async throws {
        let harness = try Harness()
        let (_, key) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Fixture.factor(status: .verified, friendlyName: "Work")))

        let updated = try await harness.push.updateFactor(
            Fixture.factorId, pushToken: "new-token", friendlyName: "Work")

        let request = try await harness.request(2)
        #expect(request.method == .patch)
        #expect(request.url == (try Fixture.url("/v1/device/factors/\(Fixture.factorId)")))
        _ = try verifiedDeviceClaims(request, key: key)
        let body = try decodeBody(UpdateFactorRequest.self, of: request)
        #expect(body.pushToken == "new-token")
        #expect(body.friendlyName == "Work")
        #expect(updated.pushToken == "new-token")
        #expect(updated.friendlyName == "Work")
        #expect(try await harness.push.factors() == [updated])
    }

    @Test(
        "a factor's metadata goes with the enrollment and each update, is kept from the server's answer, and is checked first"
    )
    func metadata() async throws {
        let harness = try Harness()
        let tooLong = ["notes": String(repeating: "x", count: FactorMetadata.maxLength)]
        await #expect(throws: VerityKitError.self) {
            try await harness.push.createFactor(
                enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .none,
                pushToken: nil, metadata: tooLong)
        }
        #expect(await harness.transport.requests.isEmpty)

        var answer = Fixture.factor(status: .unverified)
        answer.metadata = ["model": "iPhone16,2"]
        await harness.transport.enqueue(
            try Fixture.json(EnrolledPushFactor(factor: answer, nonce: Fixture.nonce), status: 201))
        let created = try await harness.push.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .none,
            pushToken: nil, metadata: ["model": "iPhone16,2"])
        #expect(
            try decodeBody(CreatePushFactorRequest.self, of: try await harness.request(0)).metadata == answer.metadata)
        #expect(created.metadata == ["model": "iPhone16,2"])

        var updatedAnswer = answer
        updatedAnswer.metadata = nil
        await harness.transport.enqueue(try Fixture.json(updatedAnswer))
        let updated = try await harness.push.updateFactor(Fixture.factorId, pushToken: nil, metadata: [:])
        #expect(try decodeBody(UpdateFactorRequest.self, of: try await harness.request(1)).metadata == [:])
        #expect(updated.metadata == nil)
        await #expect(throws: VerityKitError.self) {
            try await harness.push.updateFactor(Fixture.factorId, pushToken: nil, metadata: ["": "x"])
        }
        #expect(await harness.transport.requests.count == 2)
    }

    @Test("deleteFactor deletes on the server, then the local key and record")
    func deleteFactor() async throws {
        let harness = try Harness()
        let (_, key) = try await harness.enrollVerified()
        await harness.transport.enqueue(TransportResponse(status: 204))

        try await harness.push.deleteFactor(Fixture.factorId)

        let request = try await harness.request(2)
        #expect(request.method == .delete)
        #expect(request.url == (try Fixture.url("/v1/device/factors/\(Fixture.factorId)")))
        #expect(request.body == nil)
        _ = try verifiedDeviceClaims(request, key: key)
        #expect(try await harness.push.factors().isEmpty)
        #expect(!harness.store.allItems.keys.contains { $0.hasPrefix("verity.key.") })
    }

    @Test("deleteFactor removes the local copy when the server no longer knows the factor")
    func deleteFactorAlreadyGone() async throws {
        let harness = try Harness()
        _ = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.problem(.factorNotFound))

        try await harness.push.deleteFactor(Fixture.factorId)

        #expect(try await harness.push.factors().isEmpty)
    }

    @Test("deleteFactor keeps the local factor when the server fails")
    func deleteFactorServerFailure() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.problem(.serviceUnavailable))

        let error = await #expect(throws: VerityKitError.self) { try await harness.push.deleteFactor(Fixture.factorId) }

        #expect(error?.serverErrorCode == .serviceUnavailable)
        #expect(try await harness.push.factors() == [factor])
    }

    @Test("clearLocalStorage wipes keys, records and pending enrollments, and nothing else in the store")
    func clearLocalStorage() async throws {
        let harness = try Harness()
        _ = try await harness.enrollVerified()
        #expect(harness.store.allItems.keys.contains { $0.hasPrefix("verity.key.") })
        let session = "verity.session.\(SessionFixture.projectId)"
        harness.store.set(Data("signed in".utf8), forKey: session)

        try await harness.push.clearLocalStorage()

        #expect(Array(harness.store.allItems.keys) == [session])
        #expect(try await harness.push.factors().isEmpty)
        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.approve(challengeId: Fixture.challengeId, factorId: Fixture.factorId)
        }
        #expect(error?.code == "input")
        #expect(await harness.transport.requests.count == 2)
    }

    @Test("clearStorageOnReinstall wipes the store on the first run of an installation only", arguments: [false, true])
    func clearStorageOnReinstall(markerPresent: Bool) async throws {
        let store = InMemorySecureStore(items: ["verity.factors": Data("[]".utf8), "other": Data([1])])
        let marker = TestInstallationMarker(present: markerPresent)
        let push = VerityPush(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL(), clearStorageOnReinstall: true),
            transport: RecordingTransport(), store: store, installationMarker: marker)

        #expect(try await push.factors().isEmpty)

        // Push state goes; what else the store holds (a session, the app's own items) stays.
        #expect(Set(store.allItems.keys) == (markerPresent ? ["verity.factors", "other"] : ["other"]))
        #expect(marker.isPresent)
    }

    @Test("forgetFactor removes one factor on this device only, and asks nothing of the server")
    func forgetFactor() async throws {
        let harness = try Harness()
        _ = try await harness.enrollVerified()
        let requests = await harness.transport.requests.count

        try await harness.push.forgetFactor(Fixture.factorId)

        #expect(try await harness.push.factors().isEmpty)
        #expect(!harness.store.allItems.keys.contains { $0.hasPrefix("verity.key.") })
        #expect(await harness.transport.requests.count == requests)
        let error = await #expect(throws: VerityKitError.self) { try await harness.push.forgetFactor(Fixture.factorId) }
        #expect(error?.code == "input")
    }

    @Test("a base URL that is not HTTP is an initialization error")
    func badBaseURL() async throws {
        let push = VerityPush(
            configuration: VerityConfiguration(baseURL: URL(fileURLWithPath: "/tmp/verity")),
            transport: RecordingTransport(), store: InMemorySecureStore())
        let error = await #expect(throws: VerityKitError.self) { try await push.factors() }
        #expect(error?.code == "initialization")
    }
}
