import Foundation
import HTTPTypes
import Hummingbird

/// The trusted-proxy rule, apart from HTTP.
enum TrustedProxies {
    /// The forwarding header the operator's proxies write.
    enum Header: String, Sendable {
        case xForwardedFor = "x-forwarded-for"
        case forwarded
    }

    /// The client's address, from the peer's and the forwarding header's hops (leftmost first).
    static func client(peer: String, forwarded: [IPAddress?], trusted: [IPNetwork]) -> String {
        guard let peerAddress = IPAddress(peer), isTrusted(peerAddress, trusted) else { return peer }
        var client = peerAddress
        for hop in forwarded.reversed() {
            guard let hop else { break }
            client = hop
            guard isTrusted(hop, trusted) else { break }
        }
        return client.description
    }

    private static func isTrusted(_ address: IPAddress, _ trusted: [IPNetwork]) -> Bool {
        let judged = address.embeddedIPv4 ?? address
        return trusted.contains { $0.contains(judged) || $0.contains(address) }
    }
}
