import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Sign-in must not tell anyone that an account exists and is disabled.
@Suite("Disabled users at sign-in")
struct DisabledUserTests {
    @Test(
        "Starting a sign-in answers a disabled user like an unknown one, and sends nothing",
        arguments: TestEngine.available)
    func startAnswersAsUsual(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let disabled = "+14155550170"
            let unknown = "+14155551170"
            let user = try await client.signIn(disabled, node: node).user
            #expect(try await client.send(.post, "/v1/users/\(user.id)/disable", key: node.apiKey).status == .ok)
            let queuedBefore = try await node.verity.outbox.messages(destination: disabled).count

            var starts: [TestResponse] = []
            for number in [disabled, unknown] {
                starts.append(
                    try await client.auth(.post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)"}"#)
                )
            }
            #expect(starts.map(\.status) == [.ok, .ok])
            let bodies = try starts.map { try $0.decode(OTPStartResponse.self) }
            #expect(bodies.map(\.sent) == [true, true])
            #expect(bodies[0].maskedDestination == bodies[1].maskedDestination)
            #expect(Set(starts.map(AbuseTests.headerNames)).count == 1)
            #expect(try await node.verity.outbox.messages(destination: disabled).count == queuedBefore)

            var wrong: [TestResponse] = []
            for number in [disabled, unknown] {
                wrong.append(
                    try await client.auth(
                        .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(number)","code":"000001"}"#))
            }
            #expect(wrong[0].status == wrong[1].status)
            #expect(try wrong[0].problem() == wrong[1].problem())
        }
    }

    @Test(
        "A right code for a user disabled since it was sent opens no session and stays pending",
        arguments: TestEngine.available)
    func rightCodeForDisabledUserStaysPending(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let number = "+14155550171"
            let user = try await client.signIn(number, node: node).user
            let started = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)"}"#)
            #expect(started.status == .ok)
            let code = try await node.sender.code(to: number, count: 2)
            #expect(try await client.send(.post, "/v1/users/\(user.id)/disable", key: node.apiKey).status == .ok)
            let verify = #"{"loginId":"\#(number)","code":"\#(code)"}"#

            let refused = try await client.auth(.post, "otp/verify", project: node.project, json: verify)
            #expect(refused.status == .forbidden)
            #expect(try refused.problem().code == ErrorCode.userDisabled.rawValue)
            // The approval rolled back with the refused sign-in: once enabled again, the same code signs in.
            #expect(try await client.send(.post, "/v1/users/\(user.id)/enable", key: node.apiKey).status == .ok)
            let signedIn = try await client.auth(.post, "otp/verify", project: node.project, json: verify)
            #expect(signedIn.status == .ok)
            #expect(try signedIn.decode(AuthResponse.self).user.id == user.id)
        }
    }
}
