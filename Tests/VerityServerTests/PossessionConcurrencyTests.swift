import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Possession steps fired at once: each limit holds exactly, a refused step sends nothing, and success stays bound
/// to the number that was proven.
@Suite("Possession checks under concurrency")
struct PossessionConcurrencyTests {
    /// Runs `count` copies of `request` at once and returns each answer's status and problem code.
    static func together(
        _ count: Int, _ request: @escaping @Sendable (Int) async throws -> TestResponse
    ) async throws -> [(status: Int, code: String?)] {
        try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<count {
                group.addTask {
                    let response = try await request(index)
                    let status = Int(response.status.code)
                    return (status, status == 200 ? nil : try response.problem().code)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    static func outboxCount(_ node: TestNode, to phone: String) async throws -> Int {
        try await node.verity.outbox.messages(destination: phone).count
    }

    @Test(
        "10 code or link resends at once: 3 go out, 7 hit resend_limit_reached",
        arguments: TestEngine.available, [PossessionFlowType.mobile, .desktop])
    func resends(engine: TestEngine, kind: PossessionFlowType) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550200", flow: kind, node: node, client: client)
            let resend = kind == .mobile ? "otp/resend" : "link/resend"
            let answers = try await Self.together(10) { _ in try await flow.step(resend, client: client) }
            #expect(answers.filter { $0.status == 200 }.count == 3)
            #expect(answers.filter { $0.code == "resend_limit_reached" }.count == 7)
            #expect(try await Self.outboxCount(node, to: "+14155550200") == 4)
        }
    }

    @Test(
        "10 number changes at once: 3 succeed, 7 hit number_change_limit_reached; one code stays alive",
        arguments: TestEngine.available)
    func numberChanges(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550210", node: node, client: client)
            let answers = try await Self.together(10) { index in
                try await flow.step(
                    "otp/change-number", json: #"{"phoneNumber":"+1415555022\#(index)"}"#, client: client)
            }
            #expect(answers.filter { $0.status == 200 }.count == 3)
            #expect(answers.filter { $0.code == "number_change_limit_reached" }.count == 7)
            var sent = 0
            for index in 0..<10 { sent += try await Self.outboxCount(node, to: "+1415555022\(index)") }
            #expect(sent == 3)
            let pending = try await node.verity.database.execute { sql in
                try await sql.raw(
                    """
                    SELECT destination FROM verifications
                    WHERE purpose = \(bind: "possession_code:\(flow.started.correlationId)") AND status = 'pending'
                    """
                ).all().map { try $0.decode(column: "destination", as: String.self) }
            }
            let record = try await flow.record()
            #expect(pending == [record.phone].compactMap { $0 })
            let code = try await node.sender.code(to: try #require(record.phone))
            let done = try await flow.finish(code, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            #expect(try await flow.validate(client: client).phoneNumber == record.phone)
        }
    }

    @Test("10 retries at once after one wrong code: one is allowed", arguments: TestEngine.available)
    func retries(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550202", node: node, client: client)
            let code = try await node.sender.code(to: "+14155550202")
            _ = try await flow.step("otp/finish", json: #"{"code":"\#(wrongCode(for: code))"}"#, client: client)
            let answers = try await Self.together(10) { _ in try await flow.step("otp/retry", client: client) }
            #expect(answers.filter { $0.status == 200 }.count == 1)
            #expect(answers.filter { $0.code == "step_out_of_order" }.count == 9)
            #expect(try await flow.state(client: client).retriesLeft == 2)
        }
    }

    @Test("10 validates at once: exactly one success", arguments: TestEngine.available)
    func validates(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.proven(to: "+14155550203", node: node, client: client)
            let outcomes = try await withThrowingTaskGroup(of: PossessionValidation.self) { group in
                for _ in 0..<10 { group.addTask { try await flow.validate(client: client) } }
                return try await group.reduce(into: [PossessionValidation]()) { $0.append($1) }
            }
            #expect(outcomes.filter(\.success).count == 1)
            #expect(outcomes.filter { $0.reason == "already_validated" }.count == 9)
        }
    }

    @Test(
        "A finish with the old code racing a number change never proves the new number",
        arguments: TestEngine.available)
    func finishRacingNumberChange(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for round in 0..<8 {
                let (old, new) = ("+1415555023\(round)", "+1415555024\(round)")
                let flow = try await TestFlow.sent(to: old, node: node, client: client)
                let code = try await node.sender.code(to: old)
                async let finish = flow.finish(code, client: client)
                async let change = flow.step(
                    "otp/change-number", json: #"{"phoneNumber":"\#(new)"}"#, client: client)
                let (finished, changed) = try await (finish.status, change.status)
                #expect(!(finished == .ok && changed == .ok), "round \(round)")
                let validation = try await flow.validate(client: client)
                if validation.success {
                    #expect(validation.phoneNumber == old, "round \(round)")
                } else {
                    #expect(changed == .ok, "round \(round)")
                }
            }
        }
    }
}
