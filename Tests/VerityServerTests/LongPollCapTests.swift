import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// A node holds at most `maxLongPolls` long polls; past that, `?wait=` answers at once with the current state.
@Suite("Long-poll cap")
struct LongPollCapTests {
    @Test(
        "Past the cap a challenge long poll answers at once; the held one still gets its answer",
        arguments: TestEngine.available)
    func challenges(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, configure: { $0.maxLongPolls = 1 })
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            var ids: [String] = []
            for _ in 0..<2 {
                ids.append(
                    try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
                        .decode(Challenge.self).id)
            }
            let (first, second) = (ids[0], ids[1])
            async let held = client.send(.get, "/v1/challenges/\(first)?wait=60", key: node.apiKey)
            try await waitUntil { node.verity.longPolls.holding == 1 }

            let capped = try await client.send(.get, "/v1/challenges/\(second)?wait=60", key: node.apiKey)
            #expect(capped.status == .ok)
            #expect(try capped.decode(Challenge.self).status == .pending)
            #expect(node.verity.longPolls.holding == 1)  // the first is still waiting for its answer

            let shown = try #require(try await device.pending(client: client).first { $0.id == first })
            _ = try await device.answer(shown, .approved, client: client)
            #expect(try await held.decode(Challenge.self).status == .approved)
            #expect(node.verity.longPolls.holding == 0)
        }
    }

    @Test(
        "Past the cap a possession long poll answers at once; the held one still gets its answer",
        arguments: TestEngine.available)
    func possession(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, configure: { $0.maxLongPolls = 1 })
        try await node.run { client in
            var flows: [TestFlow] = []
            for phone in ["+14155550191", "+14155550192"] {
                let flow = try await TestFlow.start(
                    #"{"phoneNumber":"\#(phone)","flow":"desktop"}"#, node: node, client: client)
                #expect(try await flow.step("link/start", client: client).status == .ok)
                flows.append(flow)
            }
            let (first, second) = (flows[0], flows[1])
            async let held = first.state(client: client, wait: 60)
            try await waitUntil { node.verity.longPolls.holding == 1 }

            #expect(try await second.state(client: client, wait: 60).status == .linkSent)
            #expect(node.verity.longPolls.holding == 1)

            let path = try await first.linkPath(to: "+14155550191")
            #expect(try await client.send(.post, path, key: nil).status == .ok)
            #expect(try await held.status == .succeeded)
        }
    }

    @Test("VERITY_MAX_LONG_POLLS sets the cap")
    func configuration() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.maxLongPolls == LongPollGate.defaultCapacity)
        try configuration.apply(environment: ["VERITY_MAX_LONG_POLLS": "5"])
        #expect(configuration.maxLongPolls == 5)
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["VERITY_MAX_LONG_POLLS": "-1"])
        }
    }
}
