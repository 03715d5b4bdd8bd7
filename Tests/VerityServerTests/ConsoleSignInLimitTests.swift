import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// A leaked sign-in link must not beat the console's second factor: a few wrong authenticator codes spend the link,
/// and a run of them locks the operator and the client address out, for longer each time.
@Suite("Console sign-in limits")
struct ConsoleSignInLimitTests {
    @Test(
        "Three wrong codes spend a sign-in link: the right code no longer signs in and the link page says so",
        arguments: TestEngine.available)
    func linkSpent(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let totp = try await Self.operatorWithTOTP("ada", on: node)
        let link = try await Self.link(for: "ada", on: node)
        try await node.run { client in
            let right = totp.code(at: node.clock.now())
            for left in [2, 1, 0] {
                let wrong = try await client.post(
                    "/console/sign-in", form: ["token": link, "code": wrongCode(for: right)])
                #expect(wrong.status == .unauthorized)
                #expect(Self.alertCode(wrong) == "wrong_code")
                #expect(String(buffer: wrong.body).contains(left == 0 ? "it is spent" : "takes \(left) more"))
            }
            let page = try await client.execute(uri: "/console/sign-in?token=\(link)", method: .get)
            #expect(page.status == .unauthorized)
            #expect(!String(buffer: page.body).contains(#"name="code""#))
            let late = try await client.post("/console/sign-in", form: ["token": link, "code": right])
            #expect(late.status == .unauthorized)
            #expect(Self.alertCode(late) == "invalid_session")
            #expect(late.headers[.setCookie] == nil)
            let refused = try await node.verity.operators.auditTrail(search: "operator.sign_in", cursor: nil).items
            #expect(refused.map(\.action) == Array(repeating: "operator.sign_in.wrong_code", count: 3))
            #expect(refused.allSatisfy { $0.operatorName == "ada" && $0.target.hasPrefix("opr_") })
        }
    }

    @Test(
        "Five wrong codes in a row lock the operator out for a minute, then twice as long; a right code ends the run",
        arguments: TestEngine.available)
    func operatorBackOff(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let totp = try await Self.operatorWithTOTP("ada", on: node)
        let first = try await Self.link(for: "ada", on: node)
        let second = try await Self.link(for: "ada", on: node)
        let third = try await Self.link(for: "ada", on: node)
        try await node.run { client in
            func code(_ link: String, right: Bool) async throws -> TestResponse {
                let code = totp.code(at: node.clock.now())
                return try await client.post(
                    "/console/sign-in", form: ["token": link, "code": right ? code : wrongCode(for: code)])
            }
            for link in [first, first, first, second, second] {
                #expect(Self.alertCode(try await code(link, right: false)) == "wrong_code")
            }
            let locked = try await code(second, right: true)
            #expect(locked.status == .tooManyRequests)
            #expect(Self.alertCode(locked) == "rate_limited")
            #expect(locked.headers[.retryAfter] == "60")
            #expect(locked.headers[.setCookie] == nil)

            node.clock.advance(by: 61)
            #expect(Self.alertCode(try await code(second, right: false)) == "wrong_code")
            let longer = try await code(third, right: true)
            #expect(longer.status == .tooManyRequests)
            #expect(longer.headers[.retryAfter] == "120")

            node.clock.advance(by: 121)
            let signedIn = try await code(third, right: true)
            #expect(signedIn.status == .seeOther, "a refused attempt while locked did not use the link")
            #expect(signedIn.headers[.setCookie] != nil)

            let fourth = try await Self.link(for: "ada", on: node)
            node.clock.advance(by: 30)
            #expect(Self.alertCode(try await code(fourth, right: false)) == "wrong_code", "the run started again")
            let refused = try await node.verity.operators.auditTrail(search: "operator.sign_in.", cursor: nil).items
            #expect(refused.filter { $0.action == "operator.sign_in.wrong_code" }.count == 7)
            #expect(refused.filter { $0.action == "operator.sign_in.locked_out" }.count == 2)
        }
    }

    @Test(
        "Wrong codes lock out their client address for every operator, and their operator from every address",
        arguments: TestEngine.available)
    func perClientAndOperator(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.trustedProxies = TrustedProxyTests.proxies }
        let ada = try await Self.operatorWithTOTP("ada", on: node)
        let bob = try await Self.operatorWithTOTP("bob", on: node)
        let adaLinks = [try await Self.link(for: "ada", on: node), try await Self.link(for: "ada", on: node)]
        let adaLater = try await Self.link(for: "ada", on: node)
        let bobLinks = [try await Self.link(for: "bob", on: node), try await Self.link(for: "bob", on: node)]
        try await node.run(.live) { client in
            func post(_ link: String, _ code: String, from address: String) async throws -> TestResponse {
                var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                headers[try #require(HTTPField.Name("X-Forwarded-For"))] = address
                return try await client.execute(
                    uri: "/console/sign-in", method: .post, headers: headers,
                    body: ByteBuffer(string: "token=\(link)&code=\(code)"))
            }
            let adaWrong = wrongCode(for: ada.code(at: node.clock.now()))
            for link in [adaLinks[0], adaLinks[0], adaLinks[0], adaLinks[1], adaLinks[1]] {
                #expect(Self.alertCode(try await post(link, adaWrong, from: "198.51.100.7")) == "wrong_code")
            }
            let bobCode = bob.code(at: node.clock.now())
            let sameClient = try await post(bobLinks[0], bobCode, from: "198.51.100.7")
            #expect(sameClient.status == .tooManyRequests, "the client address is locked out")
            let sameOperator = try await post(adaLater, ada.code(at: node.clock.now()), from: "198.51.100.8")
            #expect(sameOperator.status == .tooManyRequests, "the operator is locked out")
            let other = try await post(bobLinks[1], bobCode, from: "198.51.100.8")
            #expect(other.status == .seeOther, "another operator from another address signs in")
            let locked = try await node.verity.operators.auditTrail(search: "operator.sign_in.locked", cursor: nil)
                .items
            #expect(Set(locked.map(\.target)).count == 2)
            #expect(locked.contains { $0.operatorName == "bob" && $0.target.contains("from 198.51.100.7") })
        }
    }

    @Test("Forty concurrent wrong codes with one link: exactly three are checked", arguments: TestEngine.available)
    func concurrentGuesses(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let totp = try await Self.operatorWithTOTP("ada", on: node)
        let link = try await Self.link(for: "ada", on: node)
        let wrong = wrongCode(for: totp.code(at: node.clock.now()))
        try await node.run(.live) { client in
            let codes = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        Self.alertCode(try await client.post("/console/sign-in", form: ["token": link, "code": wrong]))
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "wrong_code" }.count == 3)
            #expect(codes.filter { $0 == "invalid_session" }.count == 37)
            let refused = try await node.verity.operators.auditTrail(search: "operator.sign_in", cursor: nil).items
            #expect(refused.count == 3)
        }
    }

    // MARK: - Helpers

    /// Creates an operator who signs in with TOTP; the authenticator app's generator.
    static func operatorWithTOTP(_ name: String, on node: TestNode) async throws -> TOTP {
        let (_, uri) = try await node.verity.operators.create(name: name, withTOTP: true)
        let otpauth = try #require(uri)
        let secret = try #require(otpauth.firstMatch(of: /secret=([A-Z2-7]+)/).map { String($0.output.1) })
        LeakWatch.secret(secret)
        return try TOTP(secret: try #require(Base32.decode(secret)))
    }

    static func link(for name: String, on node: TestNode) async throws -> String {
        let (link, _) = try await node.verity.operators.signInLink(operatorName: name)
        LeakWatch.secret(link)
        return link
    }

    /// The stable code of the page's alert (`data-code`), if it has one.
    static func alertCode(_ response: TestResponse) -> String? {
        String(buffer: response.body).firstMatch(of: /role="alert" data-code="([a-z_]+)"/).map { String($0.output.1) }
    }
}
