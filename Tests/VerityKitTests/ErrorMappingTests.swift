import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Error mapping")
struct ErrorMappingTests {
    @Test(
        "problem documents become server errors with the server's code",
        arguments: [
            ErrorCode.challengeExpired, .challengeAlreadyAnswered, .wrongFactor, .invalidSignature, .factorNotFound,
            .challengeNotFound,
        ])
    func problemBecomesServerError(code: ErrorCode) async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Fixture.challenge()))
        await harness.transport.enqueue(try Fixture.problem(code))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.approve(challengeId: Fixture.challengeId, factorId: factor.id)
        }

        #expect(error?.code == "server")
        #expect(error?.serverErrorCode == code)
        #expect(error?.problem?.code == code.rawValue)
        #expect(error?.problem?.status == code.httpStatus)
        #expect(error?.problem?.detail == "scripted")
        #expect(error?.errorDescription?.contains(code.rawValue) == true)
    }

    @Test("an error answer without a problem document keeps its HTTP status")
    func errorWithoutProblem() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(TransportResponse(status: 502, body: Data("<html>Bad gateway</html>".utf8)))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.pendingChallenges(factorId: factor.id)
        }

        #expect(error?.problem?.status == 502)
        #expect(error?.serverErrorCode == .internalError)
    }

    @Test("an answer that is not the expected JSON is a mapping error")
    func badJSONIsMappingError() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(TransportResponse(status: 200, body: Data(#"{"items": 3}"#.utf8)))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.pendingChallenges(factorId: factor.id)
        }

        #expect(error?.code == "mapping")
    }

    @Test("a transport failure is a network error")
    func transportFailureIsNetworkError() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(failure: URLError(.notConnectedToInternet))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.pendingChallenges(factorId: factor.id)
        }

        #expect(error?.code == "network")
    }

    @Test("every kind of error has its stable code and a description")
    func stableCodes() throws {
        let table: [(VerityKitError, String)] = [
            (.network("x"), "network"), (.server(Problem(code: .conflict)), "server"), (.mapping("x"), "mapping"),
            (.storage("x"), "storage"), (.input("x"), "input"), (.keyStorage("x"), "key_storage"),
            (.initialization("x"), "initialization"), (.authenticationToken("x"), "authentication_token"),
        ]
        for (error, code) in table {
            #expect(error.code == code)
            #expect(error.errorDescription?.isEmpty == false)
            #expect((error.problem != nil) == (code == "server"))
        }
    }
}

@Suite("Logging")
struct LoggingTests {
    @Test("debug logs never contain tokens, nonces, push tokens or signatures")
    func logsHoldNoSecrets() async throws {
        let recorder = LogRecorder()
        let harness = try Harness(logger: recorder.logger)
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Fixture.challenge()))
        await harness.transport.enqueue(try Fixture.json(Fixture.challenge(status: .approved)))
        _ = try await harness.push.approve(challengeId: Fixture.challengeId, factorId: factor.id)

        var secrets = [Fixture.enrollmentToken, Fixture.nonce, Fixture.pushToken]
        for request in await harness.transport.requests {
            if let authorization = request.value(forHeader: "Authorization") {
                secrets.append(String(authorization.dropFirst("Bearer ".count)))
            }
            if let body = request.body,
                let respond = try? JSONDecoder().decode(RespondChallengeRequest.self, from: body)
            {
                secrets.append(respond.signature)
            }
        }
        let messages = recorder.all
        #expect(messages.contains { $0.hasPrefix("debug: ") })
        #expect(messages.contains { $0.contains(Fixture.challengeId) })
        for secret in secrets {
            #expect(!messages.contains { $0.contains(secret) }, "a log message contains a secret")
        }
    }

    @Test("messages below the minimum level are not even built")
    func minimumLevel() {
        let recorder = LogRecorder()
        var logger = recorder.logger
        logger.minimumLevel = .warning
        logger.log(.info, "dropped")
        logger.log(.error, "kept")
        logger.log(.off, "never")
        #expect(recorder.all == ["error: kept"])
        VerityLogger.disabled.log(.error, "nothing")
    }
}
