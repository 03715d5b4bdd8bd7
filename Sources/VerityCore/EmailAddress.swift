/// A validated email address.
///
/// Create one with ``init(parsing:)``. Validation is pragmatic rather than a full RFC 5321/5322 grammar: it accepts
/// the addresses people actually use and rejects the rest.
///
/// - The local part is a dot-atom: 1–64 characters from letters, digits and ``atextSymbols``, with single dots
///   between them (no leading, trailing or doubled dot). Quoted local parts and comments are rejected.
/// - The domain has at least two labels, 1–63 characters each, of letters, digits and hyphens, not starting or ending
///   with a hyphen; it is at most 253 characters, and the top-level label is not all digits. IP-address literals
///   (`user@[192.0.2.1]`) are rejected.
/// - The whole address is at most 254 characters.
/// - Internationalised addresses (any non-ASCII character, including Unicode domains not yet converted to
///   Punycode `xn--` form) are rejected with ``EmailAddressError/internationalized``.
///
/// The domain is lowercased; the local part keeps its case, since mail servers may treat it case-sensitively.
/// Interpolating an `EmailAddress` into a string yields ``masked``, so addresses do not leak into logs by accident.
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The longest address accepted, in characters (RFC 5321 path limit minus the angle brackets).
    public static let maximumLength = 254
    /// The longest local part accepted, in characters.
    public static let maximumLocalPartLength = 64
    /// The longest domain accepted, in characters.
    public static let maximumDomainLength = 253
    /// The longest domain label accepted, in characters.
    public static let maximumLabelLength = 63
    /// The symbols allowed in a local part besides letters, digits and (non-adjacent, inner) dots.
    public static let atextSymbols = "!#$%&'*+-/=?^_`{|}~"

    /// The normalised address: `local@domain` with the domain lowercased, for example `Jane.Doe@example.com`.
    public let address: String

    /// The part before the `@`, case preserved.
    public let localPart: String

    /// The part after the `@`, lowercased.
    public let domain: String

    /// Parses and validates an email address.
    ///
    /// - Parameter input: The address. Surrounding whitespace (any Unicode `White_Space` character, such as spaces,
    ///   tabs, newlines or no-break spaces) is ignored.
    /// - Throws: ``EmailAddressError`` describing why the input is not an acceptable address.
    public init(parsing input: String) throws(EmailAddressError) {
        // Bound the work done on absurd input before trimming and scanning it.
        guard input.utf8.count <= 4 * Self.maximumLength else { throw .tooLong }
        var slice = input[...]
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        let trimmed = String(slice)
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.utf8.allSatisfy({ $0 < 0x80 }) else { throw .internationalized }
        guard trimmed.utf8.count <= Self.maximumLength else { throw .tooLong }

        let parts = trimmed.utf8.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2, let local = parts.first, let domain = parts.last else { throw .invalidFormat }
        guard Self.isValidLocalPart(local) else { throw .invalidLocalPart }
        guard Self.isValidDomain(domain) else { throw .invalidDomain }

        let localPart = String(decoding: local, as: UTF8.self)
        let lowercasedDomain = String(decoding: domain.map(Self.lowercased), as: UTF8.self)
        self.localPart = localPart
        self.domain = lowercasedDomain
        self.address = "\(localPart)@\(lowercasedDomain)"
    }

    /// The address with the local part reduced to its first character, for example `j***@example.com`.
    /// Safe to write to logs.
    public var masked: String {
        "\(localPart.prefix(1))***@\(domain)"
    }

    /// The ``masked`` form, so that interpolating an address into a log message does not reveal it.
    public var description: String { masked }

    private static func isValidLocalPart(_ local: Substring.UTF8View) -> Bool {
        guard (1...maximumLocalPartLength).contains(local.count) else { return false }
        var previousWasDot = true  // rejects a leading dot
        for byte in local {
            if byte == UInt8(ascii: ".") {
                if previousWasDot { return false }
                previousWasDot = true
            } else if isAlphanumeric(byte) || atextSymbolBytes.contains(byte) {
                previousWasDot = false
            } else {
                return false
            }
        }
        return !previousWasDot  // rejects a trailing dot
    }

    private static func isValidDomain(_ domain: Substring.UTF8View) -> Bool {
        guard (1...maximumDomainLength).contains(domain.count) else { return false }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard (1...maximumLabelLength).contains(label.count),
                label.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }),
                label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-")
            else { return false }
        }
        guard let topLevel = labels.last, !topLevel.allSatisfy(isDigit) else { return false }
        return true
    }

    private static let atextSymbolBytes = Set(atextSymbols.utf8)

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
