import Foundation
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the server may send the webhooks a tenant configures: public addresses only, so that a webhook URL cannot
/// make Verity call its own loopback, a private network, a link-local address or a cloud metadata service (SSRF).
///
/// A URL is checked when it is saved (an address written in it, `localhost`) and again right before every delivery,
/// after its host name is resolved: every address it resolves to must be public. Redirects are never followed (the
/// webhook client refuses them), so a public endpoint cannot bounce the request inward. An operator may allow private
/// addresses for development (`VERITY_WEBHOOK_ALLOW_PRIVATE=true`).
public struct OutboundAddressPolicy: Sendable, Equatable {
    /// Whether private, loopback and link-local destinations are allowed (development only).
    public var allowPrivate: Bool

    public init(allowPrivate: Bool = false) {
        self.allowPrivate = allowPrivate
    }

    /// Blocks that are not the public internet: this host, private networks, link-local (cloud metadata lives at
    /// 169.254.169.254), carrier-grade NAT, benchmarking, documentation, multicast and reserved ranges.
    static let nonPublic: [IPNetwork] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",
        "240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "2001:db8::/32",
    ].compactMap(IPNetwork.init)

    /// Whether `address` is on the public internet: an IPv6 address that carries an IPv4 one (mapped, compatible,
    /// NAT64) is judged by it, and a 6to4 or Teredo one also by the IPv4 addresses it tunnels to.
    static func isPublic(_ address: IPAddress) -> Bool {
        let judged = address.embeddedIPv4.map { [$0] } ?? [address] + address.tunnelledIPv4
        return judged.allSatisfy { candidate in !nonPublic.contains { $0.contains(candidate) } }
    }

    /// The longest webhook URL, in UTF-8 bytes: each event's outbox row is indexed by its URL, and PostgreSQL's
    /// index entries hold at most about 2.7 kB.
    public static let maxURLBytes = 2048

    /// Why `url` may not receive webhooks, judged without a DNS look-up: longer than ``maxURLBytes``, not an
    /// absolute http(s) URL, or its host is `localhost` or an address (in any numeric form the C library accepts,
    /// `127.1` and `0x7f000001` included) that is not public. Nil when it may.
    public func refusal(of url: String) -> String? {
        guard url.utf8.count <= Self.maxURLBytes else { return "must have at most \(Self.maxURLBytes) bytes" }
        guard SignedWebhookPost.isHTTPURL(url), let host = URL(string: url)?.host else {
            return "must be an absolute http:// or https:// URL"
        }
        guard !allowPrivate else { return nil }
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        if name == "localhost" || name.hasSuffix(".localhost") {
            return "must not point at this server (localhost)"
        }
        // A fully qualified name's root dot ("169.254.169.254.") is still the address the resolver will reach.
        var numeric = host
        while numeric.hasSuffix(".") { numeric.removeLast() }
        if let addresses = Self.resolve(numeric, numericOnly: true), let refused = refusal(of: addresses) {
            return refused
        }
        return nil
    }

    /// Resolves `url`'s host and throws a permanent ``DeliveryError`` when it is refused or any address it resolves
    /// to is not public; run right before each delivery.
    func requirePublic(_ url: String) async throws {
        if let refused = refusal(of: url) { throw DeliveryError(.permanent, "webhook url \(refused)") }
        guard !allowPrivate, let host = URL(string: url)?.host else { return }
        let addresses = try await NIOThreadPool.singleton.runIfActive { Self.resolve(host, numericOnly: false) }
        guard let addresses, !addresses.isEmpty else {
            throw DeliveryError(.transient, "webhook host name did not resolve")
        }
        if let refused = refusal(of: addresses) { throw DeliveryError(.permanent, "webhook url \(refused)") }
    }

    private func refusal(of addresses: [IPAddress]) -> String? {
        guard let inward = addresses.first(where: { !Self.isPublic($0) }) else { return nil }
        return "resolves to \(inward), which is not a public address"
    }

    /// The addresses `host` stands for (`[::1]` brackets allowed); with `numericOnly`, only when it is written as an
    /// address (no DNS look-up). Nil when it does not resolve.
    static func resolve(_ host: String, numericOnly: Bool) -> [IPAddress]? {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_flags = numericOnly ? AI_NUMERICHOST : 0
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            guard let raw = entry.pointee.ai_addr else { continue }
            switch entry.pointee.ai_family {
            case AF_INET:
                let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                addresses.append(IPAddress(bytes: withUnsafeBytes(of: address) { Array($0) }))
            case AF_INET6:
                let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                addresses.append(IPAddress(bytes: withUnsafeBytes(of: address) { Array($0) }))
            default: continue
            }
        }
        return addresses
    }
}
