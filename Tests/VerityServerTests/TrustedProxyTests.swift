import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Finding 6 of the security review: the per-client limits must see the client behind the operator's proxies, and
/// nobody else's forwarding header; an IPv6 client is its /64.
@Suite("Client addresses: trusted proxies and IPv6 networks")
struct TrustedProxyTests {
    static let proxies = ["10.0.0.0/8", "127.0.0.1"].compactMap(IPNetwork.init)

    static func hops(_ header: String) -> [IPAddress?] {
        header.split(separator: ",").map { IPAddress($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test(
        "The client is the nearest forwarded address no trusted proxy vouches for",
        arguments: [
            ("198.51.100.7", "203.0.113.9", "198.51.100.7"),  // an untrusted peer: its header is not read
            ("10.0.0.1", "203.0.113.9", "203.0.113.9"),
            ("10.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.2", "203.0.113.9"),  // the client's own entries ignored
            ("127.0.0.1", "garbage, 203.0.113.9", "203.0.113.9"),
            ("10.0.0.1", "203.0.113.9, garbage", "10.0.0.1"),  // a proxy wrote nothing usable: the proxy
            ("10.0.0.1", "", "10.0.0.1"),
            ("::ffff:10.0.0.1", "2001:db8::5", "2001:db8::5"),
        ])
    func client(peer: String, forwarded: String, expected: String) {
        #expect(TrustedProxies.client(peer: peer, forwarded: Self.hops(forwarded), trusted: Self.proxies) == expected)
    }

    @Test("RFC 7239 Forwarded: for= with quotes, brackets and ports")
    func forwardedHeader() throws {
        let name = try #require(HTTPField.Name("Forwarded"))
        let headers: HTTPFields = [
            name: #"for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711", for=unknown"#
        ]
        let hops = ClientAddressMiddleware<VerityRequestContext>.hops(in: headers, .forwarded)
        #expect(hops == [IPAddress("192.0.2.60"), IPAddress("2001:db8:cafe::17"), nil])
    }

    @Test("An IPv6 client is limited as its /64; IPv4 and IPv4-mapped clients as their address")
    func buckets() {
        #expect(AuthService.clientBucket("2001:db8:1:2::1") == AuthService.clientBucket("2001:db8:1:2:ffff::9"))
        #expect(AuthService.clientBucket("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(AuthService.clientBucket("2001:db8:1:3::1") != AuthService.clientBucket("2001:db8:1:2::1"))
        #expect(AuthService.clientBucket("198.51.100.7") == "198.51.100.7")
        #expect(AuthService.clientBucket("::ffff:198.51.100.7") == "198.51.100.7")
        #expect(AuthService.clientBucket(nil) == "unknown")
    }

    @Test("Settings: VERITY_TRUSTED_PROXIES takes addresses and CIDR blocks, and refuses anything else")
    func settings() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["VERITY_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1,fd00::/8"])
        #expect(configuration.trustedProxies.map(\.description) == ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"])
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["VERITY_TRUSTED_PROXIES": "10.0.0.0/33"])
        }
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["VERITY_TRUSTED_PROXY_HEADER": "x-real-ip"])
        }
    }

    /// Sign-in starts over real HTTP from 127.0.0.1, each claiming to come from `forwardedFor`.
    static func starts(_ node: TestNode, forwardedFor: [String]) async throws -> [HTTPResponse.Status] {
        try await node.run(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for (index, address) in forwardedFor.enumerated() {
                var headers = HTTPFields()
                headers[try #require(HTTPField.Name(AuthHeaders.project))] = node.project.id
                headers[try #require(HTTPField.Name("X-Forwarded-For"))] = address
                let response = try await client.send(
                    .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"+1415555\#(1300 + index)"}"#,
                    headers: headers)
                statuses.append(response.status)
            }
            return statuses
        }
    }

    @Test("An X-Forwarded-For from an untrusted peer changes nothing", arguments: TestEngine.available)
    func untrustedPeer(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) {
            $0.rateLimits.perClientAddress = RateLimitPolicy(capacity: 2, period: 3600)
        }
        let statuses = try await Self.starts(node, forwardedFor: ["198.51.100.1", "198.51.100.2", "198.51.100.3"])
        #expect(statuses == [.ok, .ok, .tooManyRequests])
    }

    @Test(
        "Behind a trusted proxy each client has its own bucket, and an IPv6 /64 shares one",
        arguments: TestEngine.available)
    func trustedProxy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) {
            $0.rateLimits.perClientAddress = RateLimitPolicy(capacity: 2, period: 3600)
            $0.trustedProxies = Self.proxies
        }
        let statuses = try await Self.starts(
            node,
            forwardedFor: [
                "198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2", "2001:db8:7::1", "2001:db8:7::2",
                "2001:db8:7:0:ffff::3", "2001:db8:8::1",
            ])
        #expect(statuses == [.ok, .ok, .tooManyRequests, .ok, .ok, .ok, .tooManyRequests, .ok])
    }
}
