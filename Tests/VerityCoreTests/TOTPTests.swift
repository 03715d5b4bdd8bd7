import Foundation
import Testing

@testable import VerityCore

@Suite("TOTP")
struct TOTPTests {
    struct RFCVector: Sendable, CustomTestStringConvertible {
        var time: TimeInterval
        var counter: UInt64
        var algorithm: TOTP.Algorithm
        var code: String
        var testDescription: String { "\(algorithm.rawValue) at \(Int(time))" }
    }

    /// The RFC 6238 seeds: "12345678901234567890" repeated to the hash's output length.
    static func rfcSeed(_ algorithm: TOTP.Algorithm) -> [UInt8] {
        let length =
            switch algorithm {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        return Array(Array(repeating: "1234567890", count: 7).joined().utf8.prefix(length))
    }

    /// RFC 6238 Appendix B, all 18 rows.
    static let rfcVectors: [RFCVector] = [
        .init(time: 59, counter: 0x1, algorithm: .sha1, code: "94287082"),
        .init(time: 59, counter: 0x1, algorithm: .sha256, code: "46119246"),
        .init(time: 59, counter: 0x1, algorithm: .sha512, code: "90693936"),
        .init(time: 1_111_111_109, counter: 0x23523EC, algorithm: .sha1, code: "07081804"),
        .init(time: 1_111_111_109, counter: 0x23523EC, algorithm: .sha256, code: "68084774"),
        .init(time: 1_111_111_109, counter: 0x23523EC, algorithm: .sha512, code: "25091201"),
        .init(time: 1_111_111_111, counter: 0x23523ED, algorithm: .sha1, code: "14050471"),
        .init(time: 1_111_111_111, counter: 0x23523ED, algorithm: .sha256, code: "67062674"),
        .init(time: 1_111_111_111, counter: 0x23523ED, algorithm: .sha512, code: "99943326"),
        .init(time: 1_234_567_890, counter: 0x273EF07, algorithm: .sha1, code: "89005924"),
        .init(time: 1_234_567_890, counter: 0x273EF07, algorithm: .sha256, code: "91819424"),
        .init(time: 1_234_567_890, counter: 0x273EF07, algorithm: .sha512, code: "93441116"),
        .init(time: 2_000_000_000, counter: 0x3F940AA, algorithm: .sha1, code: "69279037"),
        .init(time: 2_000_000_000, counter: 0x3F940AA, algorithm: .sha256, code: "90698825"),
        .init(time: 2_000_000_000, counter: 0x3F940AA, algorithm: .sha512, code: "38618901"),
        .init(time: 20_000_000_000, counter: 0x27BC86AA, algorithm: .sha1, code: "65353130"),
        .init(time: 20_000_000_000, counter: 0x27BC86AA, algorithm: .sha256, code: "77737706"),
        .init(time: 20_000_000_000, counter: 0x27BC86AA, algorithm: .sha512, code: "47863826"),
    ]

    @Test("matches RFC 6238 Appendix B", arguments: rfcVectors)
    func rfc6238(_ vector: RFCVector) throws {
        let seed = Self.rfcSeed(vector.algorithm)
        let totp = try TOTP(secret: seed, algorithm: vector.algorithm, digits: 8)
        let date = Date(timeIntervalSince1970: vector.time)
        #expect(totp.counter(at: date) == vector.counter)
        #expect(totp.code(counter: vector.counter) == vector.code)
        #expect(totp.code(at: date) == vector.code)
        #expect(totp.matchingCounter(for: vector.code, at: date, window: 0) == vector.counter)
    }

    @Test("the RFC seeds have the hash output lengths")
    func rfcSeeds() {
        #expect(Self.rfcSeed(.sha1) == Array("12345678901234567890".utf8))
        #expect(Self.rfcSeed(.sha256).count == 32)
        #expect(Self.rfcSeed(.sha512).count == 64)
    }

    @Test("matches RFC 4226 Appendix D HOTP values")
    func rfc4226() throws {
        let totp = try TOTP(secret: Array("12345678901234567890".utf8))
        let expected = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
        ]
        for (counter, code) in expected.enumerated() {
            #expect(totp.code(counter: UInt64(counter)) == code)
        }
    }

    struct PyOTPVector: Sendable, CustomTestStringConvertible {
        var algorithm: TOTP.Algorithm
        var time: TimeInterval
        var code: String
        var testDescription: String { "\(algorithm.rawValue) at \(Int(time))" }
    }

    /// Generated with pyotp 2.12 (`pyotp.TOTP(secret, digest=hashlib.sha…).at(time)`), 6 digits, 30 s.
    static let pyotpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
    static let pyotpVectors: [PyOTPVector] = [
        .init(algorithm: .sha1, time: 0, code: "702218"),
        .init(algorithm: .sha1, time: 59, code: "503347"),
        .init(algorithm: .sha1, time: 1_111_111_109, code: "088309"),
        .init(algorithm: .sha1, time: 1_234_567_890, code: "401544"),
        .init(algorithm: .sha1, time: 1_700_000_000, code: "406058"),
        .init(algorithm: .sha1, time: 2_000_000_000, code: "978524"),
        .init(algorithm: .sha256, time: 0, code: "031423"),
        .init(algorithm: .sha256, time: 59, code: "326456"),
        .init(algorithm: .sha256, time: 1_111_111_109, code: "944326"),
        .init(algorithm: .sha256, time: 1_234_567_890, code: "843737"),
        .init(algorithm: .sha256, time: 1_700_000_000, code: "053238"),
        .init(algorithm: .sha256, time: 2_000_000_000, code: "611326"),
        .init(algorithm: .sha512, time: 0, code: "877574"),
        .init(algorithm: .sha512, time: 59, code: "649084"),
        .init(algorithm: .sha512, time: 1_111_111_109, code: "335612"),
        .init(algorithm: .sha512, time: 1_234_567_890, code: "149297"),
        .init(algorithm: .sha512, time: 1_700_000_000, code: "720184"),
        .init(algorithm: .sha512, time: 2_000_000_000, code: "350176"),
    ]

    @Test("matches pyotp's 6-digit codes", arguments: pyotpVectors)
    func pyotp(_ vector: PyOTPVector) throws {
        let secret = try #require(Base32.decode(Self.pyotpSecret))
        let totp = try TOTP(secret: secret, algorithm: vector.algorithm)
        #expect(totp.code(at: Date(timeIntervalSince1970: vector.time)) == vector.code)
    }

    @Test("counter floors whole periods and clamps before the epoch")
    func counter() throws {
        let totp = try TOTP(secret: Self.rfcSeed(.sha1))
        #expect(totp.counter(at: Date(timeIntervalSince1970: 29.999)) == 0)
        #expect(totp.counter(at: Date(timeIntervalSince1970: 30)) == 1)
        #expect(totp.counter(at: Date(timeIntervalSince1970: -1)) == 0)
        let minute = try TOTP(secret: Self.rfcSeed(.sha1), period: 60)
        #expect(minute.counter(at: Date(timeIntervalSince1970: 119)) == 1)
        #expect(minute.counter(at: Date(timeIntervalSince1970: 120)) == 2)
    }

    @Test("codes are zero-padded to the digit count", arguments: 6...8)
    func padding(_ digits: Int) throws {
        let totp = try TOTP(secret: Self.rfcSeed(.sha1), digits: digits)
        for counter in UInt64(0)..<200 {
            let code = totp.code(counter: counter)
            #expect(code.count == digits)
            #expect(code.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        }
    }

    @Test("matchingCounter accepts codes within the window only")
    func window() throws {
        let totp = try TOTP(secret: Self.rfcSeed(.sha1))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let current = totp.counter(at: now)
        #expect(totp.matchingCounter(for: totp.code(counter: current), at: now) == current)
        #expect(totp.matchingCounter(for: totp.code(counter: current - 1), at: now) == current - 1)
        #expect(totp.matchingCounter(for: totp.code(counter: current + 1), at: now) == current + 1)
        #expect(totp.matchingCounter(for: totp.code(counter: current - 2), at: now) == nil)
        #expect(totp.matchingCounter(for: totp.code(counter: current + 2), at: now) == nil)
        #expect(totp.matchingCounter(for: totp.code(counter: current - 2), at: now, window: 2) == current - 2)
        #expect(totp.matchingCounter(for: totp.code(counter: current - 1), at: now, window: 0) == nil)
        #expect(totp.matchingCounter(for: totp.code(counter: current), at: now, window: -5) == current)
    }

    @Test("matchingCounter works at the epoch without underflow")
    func windowAtEpoch() throws {
        let totp = try TOTP(secret: Self.rfcSeed(.sha1))
        let epoch = Date(timeIntervalSince1970: 0)
        #expect(totp.matchingCounter(for: totp.code(counter: 0), at: epoch, window: 3) == 0)
        #expect(totp.matchingCounter(for: totp.code(counter: 1), at: epoch, window: 3) == 1)
    }

    @Test(
        "matchingCounter rejects malformed codes",
        arguments: ["", "28708", "2870820", " 287082", "287 082", "28708a", "２８７０８２", "-87082"]
    )
    func malformedCodes(_ code: String) throws {
        let totp = try TOTP(secret: Array("12345678901234567890".utf8))
        // "287082" is the code for counter 1, i.e. t = 30…59.
        #expect(totp.matchingCounter(for: "287082", at: Date(timeIntervalSince1970: 45)) == 1)
        #expect(totp.matchingCounter(for: code, at: Date(timeIntervalSince1970: 45)) == nil)
    }

    struct InvalidCase: Sendable, CustomTestStringConvertible {
        var secretLength: Int
        var digits: Int
        var period: Int
        var error: TOTPError
        var testDescription: String { "\(error)" }
    }

    @Test(
        "rejects invalid parameters",
        arguments: [
            InvalidCase(secretLength: 0, digits: 6, period: 30, error: .secretTooShort),
            InvalidCase(secretLength: 15, digits: 6, period: 30, error: .secretTooShort),
            InvalidCase(secretLength: 20, digits: 5, period: 30, error: .invalidDigits),
            InvalidCase(secretLength: 20, digits: 9, period: 30, error: .invalidDigits),
            InvalidCase(secretLength: 20, digits: 6, period: 0, error: .invalidPeriod),
            InvalidCase(secretLength: 20, digits: 6, period: -30, error: .invalidPeriod),
            InvalidCase(secretLength: 20, digits: 6, period: 3601, error: .invalidPeriod),
        ]
    )
    func invalid(_ testCase: InvalidCase) {
        #expect(throws: testCase.error) {
            try TOTP(
                secret: [UInt8](repeating: 7, count: testCase.secretLength), digits: testCase.digits,
                period: testCase.period)
        }
        #expect(!testCase.error.description.isEmpty)
    }

    @Test("defaults are SHA-1, 6 digits, 30 seconds")
    func defaults() throws {
        let totp = try TOTP(secret: Self.rfcSeed(.sha1))
        #expect(totp.algorithm == .sha1)
        #expect(totp.digits == 6)
        #expect(totp.period == 30)
    }

    @Test("builds an otpauth URI with percent-encoded label and issuer")
    func uri() throws {
        let secret = try #require(Base32.decode(Self.pyotpSecret))
        let totp = try TOTP(secret: secret)
        #expect(
            totp.uri(issuer: "Verity Inc", account: "alice@example.com")
                == "otpauth://totp/Verity%20Inc:alice%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
                + "&issuer=Verity%20Inc&algorithm=SHA1&digits=6&period=30"
        )
        let other = try TOTP(secret: secret, algorithm: .sha512, digits: 8, period: 60)
        #expect(
            other.uri(issuer: "A&B:Ü", account: "bob+1@x.io")
                == "otpauth://totp/A%26B%3A%C3%9C:bob%2B1%40x.io?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
                + "&issuer=A%26B%3A%C3%9C&algorithm=SHA512&digits=8&period=60"
        )
    }

    @Test("algorithm names round-trip through JSON")
    func algorithmCodable() throws {
        let data = try JSONEncoder().encode([TOTP.Algorithm.sha1, .sha256, .sha512])
        #expect(String(decoding: data, as: UTF8.self) == #"["SHA1","SHA256","SHA512"]"#)
        #expect(try JSONDecoder().decode([TOTP.Algorithm].self, from: data) == [.sha1, .sha256, .sha512])
    }
}
