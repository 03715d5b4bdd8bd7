import Testing

@testable import VerityCore

@Suite("Base32 and Base64URL")
struct Base32Tests {
    /// RFC 4648 §10 test vectors, with the padding removed as ``Base32/encode(_:)`` writes none.
    static let base32Vectors: [(plain: String, encoded: String)] = [
        ("", ""),
        ("f", "MY"),
        ("fo", "MZXQ"),
        ("foo", "MZXW6"),
        ("foob", "MZXW6YQ"),
        ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI"),
    ]

    /// RFC 4648 §10 base64 test vectors; these contain no `+` or `/`, so they read the same in base64url.
    static let base64Vectors: [(plain: String, encoded: String)] = [
        ("", ""),
        ("f", "Zg"),
        ("fo", "Zm8"),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("base32 encodes the RFC 4648 vectors", arguments: base32Vectors)
    func base32Encodes(_ vector: (plain: String, encoded: String)) {
        #expect(Base32.encode(Array(vector.plain.utf8)) == vector.encoded)
    }

    @Test("base32 decodes the RFC 4648 vectors, padded or not, in any case", arguments: base32Vectors)
    func base32Decodes(_ vector: (plain: String, encoded: String)) {
        let plain = Array(vector.plain.utf8)
        let padding = String(repeating: "=", count: (8 - vector.encoded.count % 8) % 8)
        #expect(Base32.decode(vector.encoded) == plain)
        #expect(Base32.decode(vector.encoded + padding) == plain)
        #expect(Base32.decode(vector.encoded.lowercased()) == plain)
    }

    @Test("base32 ignores spaces")
    func base32IgnoresSpaces() {
        #expect(Base32.decode("JBSW Y3DP EHPK 3PXP") == Base32.decode("JBSWY3DPEHPK3PXP"))
        #expect(Base32.decode("jbsw y3dp ehpk 3pxp") == Array("Hello!".utf8) + [0xDE, 0xAD, 0xBE, 0xEF])
    }

    @Test(
        "base32 rejects invalid input",
        arguments: ["MZXW6YT1", "MZXW6YT0", "MZXW-6YQ", "MZ=XW", "M", "MZX", "MZXW6Y", "MZXW6\n", "MZXW6É"]
    )
    func base32Rejects(_ input: String) {
        #expect(Base32.decode(input) == nil)
    }

    @Test("base32 round-trips every length and byte value")
    func base32RoundTrips() {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }
            #expect(Base32.decode(Base32.encode(bytes)) == bytes)
        }
    }

    @Test("base64url encodes the RFC 4648 vectors without padding", arguments: base64Vectors)
    func base64Encodes(_ vector: (plain: String, encoded: String)) {
        #expect(Base64URL.encode(Array(vector.plain.utf8)) == vector.encoded)
    }

    @Test("base64url decodes the RFC 4648 vectors with or without padding", arguments: base64Vectors)
    func base64Decodes(_ vector: (plain: String, encoded: String)) {
        let plain = Array(vector.plain.utf8)
        let padding = String(repeating: "=", count: (4 - vector.encoded.count % 4) % 4)
        #expect(Base64URL.decode(vector.encoded) == plain)
        #expect(Base64URL.decode(vector.encoded + padding) == plain)
    }

    @Test("base64url uses - and _ for 62 and 63")
    func base64URLAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test(
        "base64url rejects invalid input",
        arguments: [
            "+/+/", "Zm9v YmFy", "Zm9v\n", "Z", "Zm9vY", "Zg=", "Zg===", "Z===", "====", "Zg==Zg==", "Zh", "Zm9", "Zé",
        ]
    )
    func base64Rejects(_ input: String) {
        #expect(Base64URL.decode(input) == nil)
    }

    @Test("base64url round-trips every length and byte value")
    func base64RoundTrips() {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 7) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("="))
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }
}
