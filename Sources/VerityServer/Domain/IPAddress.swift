#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as its bytes (4 or 16), parsed from text the way the C library does.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    /// Parses a dotted-quad IPv4 or an IPv6 address (brackets around it allowed); nil for anything else.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isIPv4: Bool { bytes.count == 4 }

    /// Whether the address is this machine's own: `127.0.0.0/8`, `::1`, or an IPv4 loopback carried in IPv6.
    var isLoopback: Bool {
        if let v4 = embeddedIPv4 { return v4.isLoopback }
        return isIPv4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1]
    }

    /// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`) or
    /// NAT64 (`64:ff9b::a.b.c.d`); nil for any other.
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let prefix = Array(bytes.prefix(12))
        let mapped = Array(repeating: UInt8(0), count: 10) + [0xff, 0xff]
        let compatible = Array(repeating: UInt8(0), count: 12)
        let nat64: [UInt8] = [0, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 8)
        guard prefix == mapped || prefix == nat64 || (prefix == compatible && bytes[12...].contains { $0 != 0 })
        else { return nil }
        return IPAddress(bytes: Array(bytes.suffix(4)))
    }

    /// The IPv4 addresses a tunnelled IPv6 address leads to: a 6to4 address's (2002::/16) gateway; a Teredo
    /// address's (2001::/32) server and its client (stored inverted). Empty for any other address.
    var tunnelledIPv4: [IPAddress] {
        guard bytes.count == 16 else { return [] }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return [IPAddress(bytes: Array(bytes[2..<6]))] }
        guard Array(bytes[0..<4]) == [0x20, 0x01, 0, 0] else { return [] }
        return [IPAddress(bytes: Array(bytes[4..<8])), IPAddress(bytes: bytes[12...].map { $0 ^ 0xff })]
    }

    /// The first `bits` bits, the rest zero: the network the address is in.
    func masked(to bits: Int) -> IPAddress {
        IPAddress(
            bytes: bytes.enumerated().map { index, byte in
                let kept = min(max(bits - index * 8, 0), 8)
                return kept == 8 ? byte : byte & ~(0xff >> kept)
            })
    }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`; a bare address is a block of one).
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    let network: IPAddress
    let bits: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(first) else { return nil }
        let maxBits = address.bytes.count * 8
        if parts.count == 2 {
            guard let bits = Int(parts[1]), (0...maxBits).contains(bits) else { return nil }
            self.bits = bits
        } else {
            bits = maxBits
        }
        network = address.masked(to: bits)
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && address.masked(to: bits) == network
    }

    public var description: String { "\(network)/\(bits)" }
}
