import Testing

@testable import VerityCore

@Suite("EmailAddress")
struct EmailAddressTests {
    @Test("parses valid addresses", arguments: EmailAddressTests.validCases)
    func parsesValid(_ testCase: ValidCase) throws {
        let email = try EmailAddress(parsing: testCase.input)
        #expect(email.address == testCase.address)
        #expect(email.address == "\(email.localPart)@\(email.domain)")
        #expect(email.domain == email.domain.lowercased())
        #expect(email.address.count <= EmailAddress.maximumLength)
    }

    @Test("rejects invalid addresses", arguments: EmailAddressTests.invalidCases)
    func rejectsInvalid(_ testCase: InvalidCase) {
        #expect(throws: testCase.error) {
            try EmailAddress(parsing: testCase.input)
        }
    }

    @Test("parsing is idempotent on the normalised form", arguments: EmailAddressTests.validCases)
    func roundTrips(_ testCase: ValidCase) throws {
        let email = try EmailAddress(parsing: testCase.input)
        let again = try EmailAddress(parsing: email.address)
        #expect(again == email)
        #expect(again.hashValue == email.hashValue)
    }

    @Test("lowercases the domain and keeps the local part's case")
    func normalisation() throws {
        let email = try EmailAddress(parsing: "  John.Doe@Example.COM \n")
        #expect(email.address == "John.Doe@example.com")
        #expect(email.localPart == "John.Doe")
        #expect(email.domain == "example.com")
        #expect(email == (try EmailAddress(parsing: "John.Doe@example.com")))
        #expect(email != (try EmailAddress(parsing: "john.doe@example.com")))
    }

    @Test("masks all but the first character of the local part", arguments: EmailAddressTests.validCases)
    func masks(_ testCase: ValidCase) throws {
        let email = try EmailAddress(parsing: testCase.input)
        let masked = email.masked
        #expect(masked == "\(email.localPart.prefix(1))***@\(email.domain)")
        #expect(masked.hasSuffix("***@\(email.domain)"))
        if email.localPart.count > 1 {
            #expect(!masked.contains(email.localPart))
        }
    }

    @Test("description and interpolation show only the masked form", arguments: EmailAddressTests.validCases)
    func descriptionIsMasked(_ testCase: ValidCase) throws {
        let email = try EmailAddress(parsing: testCase.input)
        #expect(email.description == email.masked)
        #expect("\(email)" == email.masked)
        #expect(String(describing: email) == email.masked)
    }

    @Test("masked examples")
    func maskedExamples() throws {
        #expect(try EmailAddress(parsing: "jane@example.com").masked == "j***@example.com")
        #expect(try EmailAddress(parsing: "John.Doe@Example.com").masked == "J***@example.com")
        #expect(try EmailAddress(parsing: "x@mail.example.org").masked == "x***@mail.example.org")
    }

    @Test("accepts the length limits exactly")
    func lengthLimits() throws {
        let local64 = String(repeating: "a", count: 64)
        #expect(try EmailAddress(parsing: "\(local64)@example.com").localPart == local64)
        let label63 = String(repeating: "b", count: 63)
        #expect(try EmailAddress(parsing: "a@\(label63).com").domain == "\(label63).com")

        // A 253-character domain leaves no room for a local part within 254 characters.
        let domain253 = [label63, label63, label63, String(repeating: "c", count: 57), "com"].joined(separator: ".")
        #expect(domain253.count == 253)
        #expect(throws: EmailAddressError.tooLong) { try EmailAddress(parsing: "a@\(domain253)") }

        // 254 characters in all is accepted, 255 is not.
        let domain251 = [label63, label63, label63, String(repeating: "c", count: 55), "com"].joined(separator: ".")
        #expect(domain251.count == 251)
        #expect(try EmailAddress(parsing: "ab@\(domain251)").address.count == 254)
        #expect(throws: EmailAddressError.tooLong) { try EmailAddress(parsing: "abc@\(domain251)") }
    }

    @Test("error descriptions explain the problem")
    func errorDescriptions() {
        let errors: [EmailAddressError] = [
            .empty, .tooLong, .invalidFormat, .invalidLocalPart, .invalidDomain, .internationalized,
        ]
        for error in errors {
            #expect(error.description.count > 15)
            #expect(error.description.hasSuffix("."))
        }
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(EmailAddressError.invalidFormat.description.contains("@"))
        #expect(EmailAddressError.tooLong.description.contains("254"))
    }

    @Test("never crashes on arbitrary input")
    func arbitraryInput() {
        var generator = SplitMix64(seed: 0xE3A1)
        let alphabet = Array("ab.@-_+Z09 \t\"[]()<>,;:\\é😀\u{0000}")
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 40)
            let input = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            if let email = try? EmailAddress(parsing: input) {
                #expect(email.address.filter { $0 == "@" }.count == 1)
                #expect(email.address.allSatisfy { $0.isASCII })
            }
        }
        for byteCount in [0, 1, 254, 255, 1_000, 100_000] {
            let bytes = (0..<byteCount).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? EmailAddress(parsing: String(decoding: bytes, as: UTF8.self))
        }
    }
}

extension EmailAddressTests {
    /// An address that must parse, with its normalised form.
    struct ValidCase: Sendable, CustomTestStringConvertible {
        let input: String
        let address: String

        init(_ input: String, _ address: String? = nil) {
            self.input = input
            self.address = address ?? input
        }

        var testDescription: String { input.debugDescription }
    }

    /// A string that must be rejected, with the error it must be rejected with.
    struct InvalidCase: Sendable, CustomTestStringConvertible {
        let input: String
        let error: EmailAddressError
        let note: String

        init(_ input: String, _ error: EmailAddressError, _ note: String) {
            self.input = input
            self.error = error
            self.note = note
        }

        var testDescription: String { "\(note): \(input.prefix(40).debugDescription)" }
    }

    static let validCases: [ValidCase] = [
        .init("john@example.com"),
        .init("jane.doe@example.com"),
        .init("a@b.co"),
        .init("x@mail.example.org"),
        .init("John.Doe@Example.COM", "John.Doe@example.com"),
        .init("USER@EXAMPLE.COM", "USER@example.com"),
        .init("  padded@example.com \n", "padded@example.com"),
        .init("\ttabbed@example.com\t", "tabbed@example.com"),
        .init("\u{00A0}nbsp@example.com\u{2003}\r\n", "nbsp@example.com"),
        .init("user+tag@example.com"),
        .init("user+tag+more@sub.example.co.uk"),
        .init("o'brien@example.ie"),
        .init("first_last@example.com"),
        .init("first-last@ex-ample.com"),
        .init("a.b.c.d@example.com"),
        .init("1234567890@example.com"),
        .init("user@123.example"),
        .init("user@example.c0m"),
        .init("user@a1.b2"),
        .init("user@x.io"),
        .init("user@very.deep.sub.domain.example.com"),
        .init("user@xn--bcher-kva.example"),
        .init("user@xn--80ak6aa92e.com"),
        .init("!#$%&'*+-/=?^_`{|}~@example.com"),
        .init("{weird}@example.com"),
        .init("user@EXAMPLE-host.Com", "user@example-host.com"),
        .init("CamelCase@Sub.Example.Org", "CamelCase@sub.example.org"),
        .init("\(String(repeating: "l", count: 64))@example.com"),
        .init("user@\(String(repeating: "d", count: 63)).com"),
    ]

    static let invalidCases: [InvalidCase] = [
        // Empty or oversized.
        .init("", .empty, "empty"),
        .init("   ", .empty, "spaces"),
        .init("\n\t", .empty, "newline and tab"),
        .init("a@" + String(repeating: "b", count: 250) + ".com", .tooLong, "255+ characters"),
        .init(String(repeating: "a", count: 10_000) + "@example.com", .tooLong, "10000-character local part"),
        .init(String(repeating: "@", count: 100_000), .tooLong, "100000 at signs"),
        // Not exactly one @.
        .init("plainaddress", .invalidFormat, "no @"),
        .init("example.com", .invalidFormat, "domain only"),
        .init("a@b@example.com", .invalidFormat, "two @"),
        .init("user@@example.com", .invalidFormat, "doubled @"),
        .init("\"a@b\"@example.com", .invalidFormat, "quoted @"),
        // Bad local part.
        .init("@example.com", .invalidLocalPart, "empty local part"),
        .init(".user@example.com", .invalidLocalPart, "leading dot"),
        .init("user.@example.com", .invalidLocalPart, "trailing dot"),
        .init("us..er@example.com", .invalidLocalPart, "double dot"),
        .init(".@example.com", .invalidLocalPart, "dot only"),
        .init("\"quoted\"@example.com", .invalidLocalPart, "quoted local part"),
        .init("user name@example.com", .invalidLocalPart, "space"),
        .init("user(comment)@example.com", .invalidLocalPart, "comment"),
        .init("user,name@example.com", .invalidLocalPart, "comma"),
        .init("user;name@example.com", .invalidLocalPart, "semicolon"),
        .init("user<name>@example.com", .invalidLocalPart, "angle brackets"),
        .init("user\\name@example.com", .invalidLocalPart, "backslash"),
        .init("user[1]@example.com", .invalidLocalPart, "square brackets"),
        .init("user:name@example.com", .invalidLocalPart, "colon"),
        .init("user\u{0000}@example.com", .invalidLocalPart, "NUL"),
        .init("John Doe <john@example.com>", .invalidLocalPart, "display name"),
        .init("\(String(repeating: "l", count: 65))@example.com", .invalidLocalPart, "65-character local part"),
        // Bad domain.
        .init("user@", .invalidDomain, "empty domain"),
        .init("user@localhost", .invalidDomain, "single label"),
        .init("user@example", .invalidDomain, "no TLD"),
        .init("user@.example.com", .invalidDomain, "leading dot"),
        .init("user@example.com.", .invalidDomain, "trailing dot"),
        .init("user@example..com", .invalidDomain, "empty label"),
        .init("user@-example.com", .invalidDomain, "label starts with hyphen"),
        .init("user@example-.com", .invalidDomain, "label ends with hyphen"),
        .init("user@example.-com", .invalidDomain, "TLD starts with hyphen"),
        .init("user@exa_mple.com", .invalidDomain, "underscore"),
        .init("user@exam ple.com", .invalidDomain, "space"),
        .init("user@example.com>", .invalidDomain, "angle bracket"),
        .init("user@example.123", .invalidDomain, "numeric TLD"),
        .init("user@192.168.1.1", .invalidDomain, "IPv4 address"),
        .init("user@[192.168.1.1]", .invalidDomain, "IP literal"),
        .init("user@[IPv6:2001:db8::1]", .invalidDomain, "IPv6 literal"),
        .init("user@example.com/path", .invalidDomain, "slash"),
        .init("user@example.com:25", .invalidDomain, "port"),
        .init("user@\(String(repeating: "d", count: 64)).com", .invalidDomain, "64-character label"),
        // Internationalised.
        .init("jöhn@example.com", .internationalized, "non-ASCII local part"),
        .init("user@bücher.de", .internationalized, "Unicode domain"),
        .init("用户@例子.广告", .internationalized, "Chinese"),
        .init("user@example.com\u{200B}", .internationalized, "zero-width space"),
        .init("user@exa\u{200B}mple.com", .internationalized, "inner zero-width space"),
        .init("user@ｅxample.com", .internationalized, "fullwidth letter"),
        .init("user\u{00A0}@example.com", .internationalized, "no-break space"),
        .init("😀@example.com", .internationalized, "emoji"),
    ]

    /// A small deterministic generator, so the fuzz test is reproducible.
    struct SplitMix64 {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
