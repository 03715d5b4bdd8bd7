import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The attacks on a code sender: SMS pumping (premium-rate numbers, blocked countries, bursts to sequential
/// numbers), brute force across many verifications from one client, and user enumeration.
@Suite("Abuse")
struct AbuseTests {
    /// Starts a send to `number` on each of the three paths that send codes: the API, sign-in and a possession flow.
    static func startEverywhere(_ number: String, node: TestNode, client: some TestClientProtocol) async throws
        -> [(path: String, response: TestResponse)]
    {
        let api = try await client.startVerification(number, key: node.apiKey)
        let signIn = try await client.auth(
            .post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)"}"#)
        let possession = try await client.send(
            .post, "/v1/possession", key: node.apiKey, json: #"{"phoneNumber":"\#(number)","flow":"mobile"}"#)
        return [("verifications", api), ("auth/otp/start", signIn), ("possession", possession)]
    }

    @Test(
        "SMS pumping: premium-rate and shared-cost numbers are refused on every sending path, nothing is sent or stored",
        arguments: TestEngine.available)
    func premiumRate(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for number in ["+19005550100", "+449098790000", "+448712345678", "+4990012345678", "+33899123456"] {
                for (path, response) in try await Self.startEverywhere(number, node: node, client: client) {
                    #expect(response.status == .forbidden, "\(number) on \(path)")
                    #expect(try response.problem().code == "premium_rate_number", "\(number) on \(path)")
                }
                let check = try await client.check(to: number, code: "123456", key: node.apiKey)
                #expect(check.status == .notFound, "no verification was stored for \(number)")
            }
            // An ordinary number in the same countries still gets its code.
            #expect(try await client.startVerification("+14155550100", key: node.apiKey).status == .created)
            #expect(try await client.startVerification("+447700900123", key: node.apiKey).status == .created)
            // The outbox may deliver the two in either order: wait for each.
            _ = try await node.sender.waitForMessages(to: "+14155550100", count: 1)
            _ = try await node.sender.waitForMessages(to: "+447700900123", count: 1)
            #expect(node.sender.messages().count == 2)
        }
    }

    @Test("SMS pumping: a blocked country is refused on every sending path", arguments: TestEngine.available)
    func blockedCountry(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(allowedCountries: ["US"]))
        try await node.run { client in
            // Numbers in countries often used for pumping; the project sends to the US only.
            for number in ["+447700900123", "+2348031234567", "+99899123456"] {
                for (path, response) in try await Self.startEverywhere(number, node: node, client: client)
                where response.status != .badRequest {
                    #expect(response.status == .forbidden, "\(number) on \(path)")
                    #expect(try response.problem().code == "country_not_allowed", "\(number) on \(path)")
                }
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test(
        "SMS pumping: bursts to sequential numbers meet the number-block limit, shared by every sending path",
        arguments: TestEngine.available)
    func sequentialBurst(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perNumberBlock = RateLimitPolicy(capacity: 5, period: 3600)
        }
        try await node.run { client in
            var statuses: [HTTPResponse.Status] = []
            for suffix in 100...109 {
                statuses.append(try await client.startVerification("+14155550\(suffix)", key: node.apiKey).status)
            }
            #expect(statuses == Array(repeating: .created, count: 5) + Array(repeating: .tooManyRequests, count: 5))
            let limited = try await client.startVerification("+14155550110", key: node.apiKey)
            #expect(try limited.problem().code == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)

            // The block is shared: sign-in and possession sends to it are refused too, and nothing more is sent.
            let signIn = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550111"}"#)
            #expect(signIn.status == .tooManyRequests)
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550112","flow":"mobile"}"#, node: node, client: client)
            #expect(try await flow.step("otp/start", client: client).status == .tooManyRequests)

            // The next block of 1,000 numbers, and other countries, are not affected.
            #expect(try await client.startVerification("+14155551100", key: node.apiKey).status == .created)
            #expect(try await client.startVerification("+447700900100", key: node.apiKey).status == .created)
            // The outbox delivers in no set order: wait for each of the seven, then make sure no eighth follows.
            for destination in (100...104).map({ "+14155550\($0)" }) + ["+14155551100", "+447700900100"] {
                _ = try await node.sender.waitForMessages(to: destination, count: 1)
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages().count == 7)
        }
    }

    @Test(
        "Brute force across many sign-ins from one client stops at the per-client limit, whatever the login ids",
        arguments: TestEngine.available)
    func bruteForceAcrossVerifications(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perClientAddress = RateLimitPolicy(capacity: 20, period: 60)
        }
        try await node.run { client in
            // Four pending sign-ins in different number blocks, so only the client limit is in play.
            let numbers = ["+14155550100", "+14155551100", "+14155552100", "+14155553100"]
            for number in numbers {
                let started = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)"}"#)
                #expect(started.status == .ok)
            }
            // Guess round-robin, always a wrong code, so each verification alone stays under its own 5 wrong codes
            // for as long as possible.
            var wrong = 0
            var limitedAt: Int?
            for guess in 0..<40 {
                let number = numbers[guess % numbers.count]
                let code = try await node.sender.code(to: number) == "000000" ? "111111" : "000000"
                let response = try await client.auth(
                    .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(number)","code":"\#(code)"}"#)
                if response.status == .tooManyRequests, try response.problem().code == "rate_limited" {
                    limitedAt = guess
                    break
                }
                #expect(response.status == .unauthorized)
                wrong += 1
            }
            // 20 requests a minute from this client: 4 starts and 16 guesses, then 429 with Retry-After.
            #expect(limitedAt == 16)
            #expect(wrong == 16)
            // The limit holds for the right code too: the client cannot sign in until the window refills.
            let right = try await client.auth(
                .post, "otp/verify", project: node.project,
                json: #"{"loginId":"\#(numbers[0])","code":"\#(try await node.sender.code(to: numbers[0]))"}"#)
            #expect(right.status == .tooManyRequests)
            #expect(right.headers[.retryAfter] != nil)
        }
    }

    @Test(
        "Enumeration: sign-in answers the same for a known and an unknown login id", arguments: TestEngine.available)
    func enumeration(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let known = "+14155550100"
            let unknown = "+14155551100"
            _ = try await client.signIn(known, node: node)

            let starts = try await [known, unknown].asyncMap { number in
                try await client.auth(.post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)"}"#)
            }
            #expect(starts.map(\.status) == [.ok, .ok])
            let bodies = try starts.map { try $0.decode(OTPStartResponse.self) }
            #expect(bodies.map(\.sent) == [true, true])
            #expect(bodies.map(\.maskedDestination) == ["+1********00", "+1********00"])
            #expect(Set(starts.map { Self.headerNames($0) }).count == 1)

            let wrong = try await [known, unknown].asyncMap { number in
                try await client.auth(
                    .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(number)","code":"000001"}"#)
            }
            #expect(wrong.map(\.status) == [.unauthorized, .unauthorized])
            let problems = try wrong.map { try $0.problem() }
            #expect(problems[0] == problems[1])

            // Without a pending code, a signed-in user and a stranger get the same answer as well.
            let signedIn = "+14155552100"
            _ = try await client.signIn(signedIn, node: node)
            let idle = try await [signedIn, "+14155553100"].asyncMap { number in
                try await client.auth(
                    .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(number)","code":"000001"}"#)
            }
            #expect(idle[0].status == idle[1].status)
            #expect(try idle[0].problem() == idle[1].problem())
        }
    }

    static func headerNames(_ response: TestResponse) -> [String] {
        response.headers.map { $0.name.canonicalName }.filter { $0 != "x-request-id" && $0 != "date" }.sorted()
    }
}

extension Array where Element: Sendable {
    /// Maps in order, awaiting each element before the next.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
