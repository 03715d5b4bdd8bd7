import Testing

@testable import VerityCore

@Suite("PhoneNumber")
struct PhoneNumberTests {
    @Test("parses valid numbers", arguments: PhoneNumberTests.validCases)
    func parsesValid(_ testCase: ValidCase) throws {
        let number = try PhoneNumber(parsing: testCase.input)
        #expect(number.e164 == testCase.e164)
        #expect(number.countryCallingCode == testCase.callingCode)
        #expect(number.regionCode == testCase.region)
        #expect("+\(number.countryCallingCode)\(number.nationalNumber)" == number.e164)
        #expect(number.nationalNumber.allSatisfy { $0.isASCII })
        #expect(number.nationalNumber.allSatisfy { $0.isNumber })
        #expect((2...16).contains(number.e164.count))
    }

    @Test("rejects invalid input", arguments: PhoneNumberTests.invalidCases)
    func rejectsInvalid(_ testCase: InvalidCase) {
        #expect(throws: testCase.error) {
            try PhoneNumber(parsing: testCase.input)
        }
    }

    @Test("parsing is idempotent on the E.164 form", arguments: PhoneNumberTests.validCases)
    func roundTrips(_ testCase: ValidCase) throws {
        let number = try PhoneNumber(parsing: testCase.input)
        let again = try PhoneNumber(parsing: number.e164)
        #expect(again == number)
        #expect(again.hashValue == number.hashValue)
    }

    @Test("formatting does not affect equality")
    func formattingIsIgnored() throws {
        let plain = try PhoneNumber(parsing: "+14155550100")
        for input in [
            "+1 415 555 0100", "+1 (415) 555-0100", "+1.415.555.0100", "\t+1-415-555-0100 \r\n", "+(1)4155550100",
        ] {
            #expect(try PhoneNumber(parsing: input) == plain)
        }
        #expect(try PhoneNumber(parsing: "+14155550101") != plain)
        #expect(Set([plain, try PhoneNumber(parsing: "+1 415 555 0100")]).count == 1)
    }

    @Test("exposes components")
    func components() throws {
        let number = try PhoneNumber(parsing: "+44 20 7946 0958")
        #expect(number.e164 == "+442079460958")
        #expect(number.countryCallingCode == 44)
        #expect(number.regionCode == "GB")
        #expect(number.nationalNumber == "2079460958")

        let italian = try PhoneNumber(parsing: "+39 06 1234 5678")
        #expect(italian.nationalNumber == "0612345678")
        #expect(italian.countryCallingCode == 39)
    }

    @Test(
        "detects the NANP region from the area code",
        arguments: [
            ("+14165550123", "CA"), ("+16475550123", "CA"), ("+15145550123", "CA"), ("+14185550123", "CA"),
            ("+16045550123", "CA"), ("+12505550123", "CA"), ("+14035550123", "CA"), ("+15875550123", "CA"),
            ("+12045550123", "CA"), ("+13065550123", "CA"), ("+15065550123", "CA"), ("+17095550123", "CA"),
            ("+19025550123", "CA"), ("+18675550123", "CA"), ("+19055550123", "CA"), ("+16135550123", "CA"),
            ("+14155550123", "US"), ("+12125550123", "US"), ("+13105550123", "US"), ("+17735550123", "US"),
            ("+18005550123", "US"), ("+12065550123", "US"), ("+19175550123", "US"), ("+15125550123", "US"),
            ("+18765550123", "JM"), ("+16585550123", "JM"), ("+17875550123", "PR"), ("+19395550123", "PR"),
            ("+18095550123", "DO"), ("+18295550123", "DO"), ("+18495550123", "DO"), ("+13453231234", "KY"),
            ("+16715550123", "GU"), ("+13405550123", "VI"), ("+12684641234", "AG"), ("+17582845678", "LC"),
        ]
    )
    func nanpRegion(input: String, region: String) throws {
        let number = try PhoneNumber(parsing: input)
        #expect(number.countryCallingCode == 1)
        #expect(number.regionCode == region)
    }

    @Test(
        "detects regions sharing a calling code",
        arguments: [
            ("+79123456789", "RU"), ("+74951234567", "RU"), ("+78121234567", "RU"), ("+77012345678", "KZ"),
            ("+77272123456", "KZ"), ("+442079460958", "GB"), ("+447400123456", "GB"), ("+441481256789", "GG"),
            ("+441534123456", "JE"), ("+441624756789", "IM"), ("+358401234567", "FI"), ("+358181234567", "AX"),
            ("+4791234567", "NO"), ("+4779123456", "SJ"), ("+390612345678", "IT"), ("+39066981234", "VA"),
        ]
    )
    func sharedCodeRegion(input: String, region: String) throws {
        #expect(try PhoneNumber(parsing: input).regionCode == region)
    }

    @Test("masks all but the calling code and the last two digits", arguments: PhoneNumberTests.validCases)
    func masksNumber(_ testCase: ValidCase) throws {
        let number = try PhoneNumber(parsing: testCase.input)
        let masked = number.masked
        let prefix = "+\(number.countryCallingCode)"
        #expect(masked.hasPrefix(prefix))
        #expect(masked.count == number.e164.count)
        #expect(masked.hasSuffix(String(number.e164.suffix(2))))
        let visibleDigits = masked.filter(\.isNumber).count
        #expect(visibleDigits == String(number.countryCallingCode).count + 2)
        #expect(masked.dropFirst(prefix.count).dropLast(2).allSatisfy { $0 == "*" })
        #expect(!masked.contains(number.nationalNumber))
    }

    @Test("description and interpolation show only the masked form", arguments: PhoneNumberTests.validCases)
    func descriptionIsMasked(_ testCase: ValidCase) throws {
        let number = try PhoneNumber(parsing: testCase.input)
        #expect(number.description == number.masked)
        #expect("\(number)" == number.masked)
        #expect(String(describing: number) == number.masked)
        #expect(!"\(number)".contains(number.nationalNumber))
    }

    @Test("masked examples")
    func maskedExamples() throws {
        #expect(try PhoneNumber(parsing: "+14155550100").masked == "+1********00")
        #expect(try PhoneNumber(parsing: "+442079460958").masked == "+44********58")
        #expect(try PhoneNumber(parsing: "+35312345678").masked == "+353******78")
        #expect(try PhoneNumber(parsing: "+4311234").masked == "+43***34")
    }

    @Test("error descriptions explain the problem")
    func errorDescriptions() {
        let errors: [PhoneNumberError] = [.notE164, .unknownCountryCode, .invalidLength, .invalidNumber]
        for error in errors {
            #expect(error.description.count > 20)
            #expect(error.description.hasSuffix("."))
        }
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(PhoneNumberError.notE164.description.contains("E.164"))
        #expect(PhoneNumberError.notE164.description.contains("+14155550100"))
        #expect(PhoneNumberError.unknownCountryCode.description.contains("country"))
    }

    @Test("never crashes on arbitrary input")
    func arbitraryInput() {
        var generator = SplitMix64(seed: 0x5EED)
        let alphabet = Array("+0123456789 -.()abcXYZ#*/\t\n１٣\u{00A0}\u{0301}😀é")
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 40)
            let input = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            if let number = try? PhoneNumber(parsing: input) {
                #expect(number.e164.first == "+")
                #expect(number.e164.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
                #expect(number.e164.count <= 16)
            }
        }
        for _ in 0..<2_000 {
            let digits = (0..<Int(generator.next() % 17)).map { _ in String(generator.next() % 10) }.joined()
            _ = try? PhoneNumber(parsing: "+" + digits)
        }
        for byteCount in [0, 1, 63, 64, 65, 1_000, 100_000] {
            let bytes = (0..<byteCount).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? PhoneNumber(parsing: String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test("rejects long inputs before looking at them")
    func rejectsLongInput() {
        let padded = "+14155550100" + String(repeating: " ", count: PhoneNumber.maximumInputLength - 12)
        #expect(padded.utf8.count == PhoneNumber.maximumInputLength)
        #expect(throws: Never.self) { try PhoneNumber(parsing: padded) }
        #expect(throws: PhoneNumberError.notE164) { try PhoneNumber(parsing: padded + " ") }
        #expect(throws: PhoneNumberError.notE164) {
            try PhoneNumber(parsing: "+" + String(repeating: "4", count: 1_000_000))
        }
    }
}

@Suite("PhoneNumber numbering plan table")
struct NumberingPlanTableTests {
    typealias Plan = PhoneNumber.NumberingPlan

    @Test("has no duplicate calling codes")
    func uniqueCallingCodes() {
        let codes = Plan.all.map(\.callingCode)
        #expect(Set(codes).count == codes.count)
        #expect(Plan.byCallingCode.count == codes.count)
    }

    @Test("calling codes are 1–3 digits and prefix-free")
    func callingCodesArePrefixFree() {
        let codes = Plan.all.map { String($0.callingCode) }
        for code in codes {
            #expect((1...3).contains(code.count), "\(code)")
            #expect(!code.hasPrefix("0"), "\(code)")
            for other in codes where other != code {
                #expect(!other.hasPrefix(code), "\(code) is a prefix of \(other)")
            }
        }
    }

    @Test("patterns are well formed and no longer than the shortest length")
    func patternsAreWellFormed() {
        for plan in Plan.all {
            #expect(!plan.rules.isEmpty, "+\(plan.callingCode)")
            for rule in plan.rules {
                #expect(rule.leadingDigits.isWellFormed, "+\(plan.callingCode)")
                #expect(rule.leadingDigits.maximumLength <= rule.lengths.lowerBound, "+\(plan.callingCode)")
                #expect(rule.lengths.lowerBound >= 4, "+\(plan.callingCode)")
                let totalDigits = String(plan.callingCode).count + rule.lengths.upperBound
                #expect(totalDigits <= PhoneNumber.maximumDigits, "+\(plan.callingCode)")
            }
        }
    }

    @Test("region codes look like ISO 3166-1 alpha-2")
    func regionCodes() {
        let regions = Plan.all.flatMap { [$0.regionCode] + Array($0.regionsByPrefix.values) }
        for region in regions {
            #expect(region.count == 2 && region.allSatisfy { $0.isASCII && $0.isUppercase }, "\(region)")
        }
        for plan in Plan.all {
            for prefix in plan.regionsByPrefix.keys {
                #expect(prefix.count <= Plan.longestRegionPrefix)
                #expect(prefix.allSatisfy { $0.isASCII && $0.isNumber })
            }
        }
    }

    @Test("covers the required regions")
    func coverage() {
        let required = [
            "US", "GB", "GR", "NL", "BE", "FR", "ES", "PT", "LU", "IE", "MT", "CY", "FI", "BG", "HU", "LT", "LV",
            "EE", "HR", "SI", "IT", "RO", "CZ", "SK", "AT", "DK", "SE", "PL", "DE", "IN", "BR", "CN", "JP", "AU",
            "CH", "NO", "IS", "TR", "RU", "MX", "AR", "CO", "CL", "ZA", "NG", "KE", "EG", "IL", "AE", "SA", "SG",
            "HK", "TW", "KR", "PH", "ID", "MY", "TH", "VN", "NZ", "PK", "BD",
        ]
        let mainRegions = Set(Plan.all.map(\.regionCode))
        for region in required {
            #expect(mainRegions.contains(region), "\(region)")
        }
        let allRegions = mainRegions.union(Plan.all.flatMap(\.regionsByPrefix.values))
        #expect(allRegions.isSuperset(of: ["CA", "KZ"]))
    }

    @Test("leading-digit patterns")
    func leadingDigits() {
        let nanp = PhoneNumber.LeadingDigits("[2-9]XX[2-9]")
        #expect(nanp.isWellFormed)
        #expect(nanp.maximumLength == 4)
        #expect(nanp.admits([4, 1, 5, 5, 5, 5]))
        #expect(nanp.admits([4, 1]))
        #expect(nanp.admits([]))
        #expect(!nanp.admits([1, 1, 5, 5]))
        #expect(!nanp.admits([4, 1, 5, 1]))

        let alternatives = PhoneNumber.LeadingDigits("4[5-9]|50|[1-35689]")
        #expect(alternatives.isWellFormed)
        #expect(alternatives.admits([4, 7]))
        #expect(alternatives.admits([5, 0]))
        #expect(alternatives.admits([6]))
        #expect(!alternatives.admits([4, 4]))
        #expect(!alternatives.admits([7]))
        #expect(!alternatives.admits([0]))

        for malformed in ["", "|", "[", "[]", "[9-2]", "[2-]", "[-2]", "a", "4|", "[2-9", "X]"] {
            #expect(!PhoneNumber.LeadingDigits(malformed).isWellFormed, "\(malformed)")
        }
        #expect(!PhoneNumber.LeadingDigits("[").admits([1]))
    }
}

extension PhoneNumberTests {
    /// A number that must parse, with what it must parse to.
    struct ValidCase: Sendable, CustomTestStringConvertible {
        let input: String
        let e164: String
        let callingCode: Int
        let region: String

        init(_ input: String, _ callingCode: Int, _ region: String, e164: String? = nil) {
            self.input = input
            self.e164 = e164 ?? input
            self.callingCode = callingCode
            self.region = region
        }

        var testDescription: String { "\(input) → \(region)" }
    }

    /// A string that must be rejected, with the error it must be rejected with.
    struct InvalidCase: Sendable, CustomTestStringConvertible {
        let input: String
        let error: PhoneNumberError
        let note: String

        init(_ input: String, _ error: PhoneNumberError, _ note: String) {
            self.input = input
            self.error = error
            self.note = note
        }

        var testDescription: String { "\(note): \(input.prefix(40).debugDescription)" }
    }

    static let validCases: [ValidCase] = [
        // NANP: United States, Canada and the Caribbean.
        .init("+14155550100", 1, "US"),
        .init("+12125551234", 1, "US"),
        .init("+16175550123", 1, "US"),
        .init("+13055550123", 1, "US"),
        .init("+12025550143", 1, "US"),
        .init("+19175550123", 1, "US"),
        .init("+1 (415) 555-0100", 1, "US", e164: "+14155550100"),
        .init("+1.415.555.0100", 1, "US", e164: "+14155550100"),
        .init("  +1 415 555 0100\n", 1, "US", e164: "+14155550100"),
        .init("+1-800-555-0199", 1, "US", e164: "+18005550199"),
        .init("+14165550123", 1, "CA"),
        .init("+1 416 555 0123", 1, "CA", e164: "+14165550123"),
        .init("+16045550123", 1, "CA"),
        .init("+15145550123", 1, "CA"),
        .init("+16135550123", 1, "CA"),
        .init("+17805550123", 1, "CA"),
        .init("+19025550123", 1, "CA"),
        .init("+14385550123", 1, "CA"),
        .init("+18675550123", 1, "CA"),
        .init("+18765550123", 1, "JM"),
        .init("+17875550123", 1, "PR"),
        .init("+18095550123", 1, "DO"),
        .init("+12423591234", 1, "BS"),
        .init("+14413701234", 1, "BM"),
        .init("+18682911234", 1, "TT"),
        .init("+12462501234", 1, "BB"),
        // United Kingdom and Crown Dependencies.
        .init("+442079460958", 44, "GB"),
        .init("+44 20 7946 0958", 44, "GB", e164: "+442079460958"),
        .init("+441214960123", 44, "GB"),
        .init("+441614960000", 44, "GB"),
        .init("+447400123456", 44, "GB"),
        .init("+447523123456", 44, "GB"),
        .init("+447911123456", 44, "GG"),
        .init("+441481256789", 44, "GG"),
        .init("+447797123456", 44, "JE"),
        .init("+447624123456", 44, "IM"),
        // EU member states.
        .init("+306912345678", 30, "GR"),
        .init("+302101234567", 30, "GR"),
        .init("+31612345678", 31, "NL"),
        .init("+31201234567", 31, "NL"),
        .init("+32470123456", 32, "BE"),
        .init("+3222345678", 32, "BE"),
        .init("+33612345678", 33, "FR"),
        .init("+33 6 12 34 56 78", 33, "FR", e164: "+33612345678"),
        .init("+33.1.42.68.53.00", 33, "FR", e164: "+33142685300"),
        .init("+33756123456", 33, "FR"),
        .init("+34612345678", 34, "ES"),
        .init("+34912345678", 34, "ES"),
        .init("+351912345678", 351, "PT"),
        .init("+351212345678", 351, "PT"),
        .init("+352621123456", 352, "LU"),
        .init("+35227123456", 352, "LU"),
        .init("+353871234567", 353, "IE"),
        .init("+35312345678", 353, "IE"),
        .init("+35679123456", 356, "MT"),
        .init("+35621234567", 356, "MT"),
        .init("+35799123456", 357, "CY"),
        .init("+35722123456", 357, "CY"),
        .init("+358401234567", 358, "FI"),
        .init("+35891234567", 358, "FI"),
        .init("+358181234567", 358, "AX"),
        .init("+359881234567", 359, "BG"),
        .init("+35921234567", 359, "BG"),
        .init("+36201234567", 36, "HU"),
        .init("+3612345678", 36, "HU"),
        .init("+37061234567", 370, "LT"),
        .init("+37052123456", 370, "LT"),
        .init("+37121234567", 371, "LV"),
        .init("+37161234567", 371, "LV"),
        .init("+3725123456", 372, "EE"),
        .init("+3726123456", 372, "EE"),
        .init("+385911234567", 385, "HR"),
        .init("+38512345678", 385, "HR"),
        .init("+38631234567", 386, "SI"),
        .init("+38612345678", 386, "SI"),
        .init("+390612345678", 39, "IT"),
        .init("+39 02 1234 5678", 39, "IT", e164: "+390212345678"),
        .init("+393123456789", 39, "IT"),
        .init("+39066982123", 39, "VA"),
        .init("+40712345678", 40, "RO"),
        .init("+40212345678", 40, "RO"),
        .init("+420601123456", 420, "CZ"),
        .init("+420212345678", 420, "CZ"),
        .init("+421912123456", 421, "SK"),
        .init("+421223456789", 421, "SK"),
        .init("+436641234567", 43, "AT"),
        .init("+431234567890", 43, "AT"),
        .init("+4520123456", 45, "DK"),
        .init("+4532123456", 45, "DK"),
        .init("+46701234567", 46, "SE"),
        .init("+4681234567", 46, "SE"),
        .init("+48512345678", 48, "PL"),
        .init("+48221234567", 48, "PL"),
        .init("+4915123456789", 49, "DE"),
        .init("+491761234567", 49, "DE"),
        .init("+4917612345678", 49, "DE"),
        .init("+493012345678", 49, "DE"),
        .init("+49 89 1234567", 49, "DE", e164: "+49891234567"),
        // India, Brazil, China, Japan, Australia.
        .init("+919876543210", 91, "IN"),
        .init("+917012345678", 91, "IN"),
        .init("+916123456789", 91, "IN"),
        .init("+911123456789", 91, "IN"),
        .init("+912223456789", 91, "IN"),
        .init("+5511987654321", 55, "BR"),
        .init("+5521987654321", 55, "BR"),
        .init("+551123456789", 55, "BR"),
        .init("+55 (61) 3123-4567", 55, "BR", e164: "+556131234567"),
        .init("+8613812345678", 86, "CN"),
        .init("+8618912345678", 86, "CN"),
        .init("+861012345678", 86, "CN"),
        .init("+862112345678", 86, "CN"),
        .init("+8675512345678", 86, "CN"),
        .init("+81312345678", 81, "JP"),
        .init("+819012345678", 81, "JP"),
        .init("+818012345678", 81, "JP"),
        .init("+81667891234", 81, "JP"),
        .init("+61412345678", 61, "AU"),
        .init("+61212345678", 61, "AU"),
        .init("+61 3 9123 4567", 61, "AU", e164: "+61391234567"),
        // Other common countries.
        .init("+41791234567", 41, "CH"),
        .init("+41441234567", 41, "CH"),
        .init("+4791234567", 47, "NO"),
        .init("+4722123456", 47, "NO"),
        .init("+3546111234", 354, "IS"),
        .init("+905321234567", 90, "TR"),
        .init("+902121234567", 90, "TR"),
        .init("+79123456789", 7, "RU"),
        .init("+74951234567", 7, "RU"),
        .init("+77012345678", 7, "KZ"),
        .init("+77172123456", 7, "KZ"),
        .init("+525512345678", 52, "MX"),
        .init("+5491123456789", 54, "AR"),
        .init("+541123456789", 54, "AR"),
        .init("+573001234567", 57, "CO"),
        .init("+56961234567", 56, "CL"),
        .init("+27821234567", 27, "ZA"),
        .init("+27211234567", 27, "ZA"),
        .init("+2348031234567", 234, "NG"),
        .init("+254712345678", 254, "KE"),
        .init("+201001234567", 20, "EG"),
        .init("+20223456789", 20, "EG"),
        .init("+972502345678", 972, "IL"),
        .init("+97221234567", 972, "IL"),
        .init("+971501234567", 971, "AE"),
        .init("+97142345678", 971, "AE"),
        .init("+966501234567", 966, "SA"),
        .init("+6591234567", 65, "SG"),
        .init("+6561234567", 65, "SG"),
        .init("+85291234567", 852, "HK"),
        .init("+886912345678", 886, "TW"),
        .init("+886223456789", 886, "TW"),
        .init("+821012345678", 82, "KR"),
        .init("+8221234567", 82, "KR"),
        .init("+639171234567", 63, "PH"),
        .init("+6281234567890", 62, "ID"),
        .init("+62215551234", 62, "ID"),
        .init("+60123456789", 60, "MY"),
        .init("+60323456789", 60, "MY"),
        .init("+66812345678", 66, "TH"),
        .init("+6621234567", 66, "TH"),
        .init("+84912345678", 84, "VN"),
        .init("+842423456789", 84, "VN"),
        .init("+64211234567", 64, "NZ"),
        .init("+6493012345", 64, "NZ"),
        .init("+923001234567", 92, "PK"),
        .init("+8801712345678", 880, "BD"),
        .init("+380501234567", 380, "UA"),
        .init("+51912345678", 51, "PE"),
        .init("+212612345678", 212, "MA"),
        .init("+233241234567", 233, "GH"),
        .init("+97433123456", 974, "QA"),
    ]

    static let invalidCases: [InvalidCase] = [
        // Not E.164 at all.
        .init("", .notE164, "empty"),
        .init("   ", .notE164, "whitespace only"),
        .init("+", .notE164, "plus only"),
        .init("+ ( ) - .", .notE164, "formatting only"),
        .init("14155550100", .notE164, "missing +"),
        .init("0014155550100", .notE164, "00 prefix"),
        .init("(415) 555-0100", .notE164, "national format"),
        .init("++14155550100", .notE164, "double plus"),
        .init("+1415+5550100", .notE164, "plus inside"),
        .init("(+1) 415 555 0100", .notE164, "parenthesis before plus"),
        .init("+1 (415) abc", .notE164, "letters"),
        .init("+1-800-FLOWERS", .notE164, "vanity letters"),
        .init("+1 415 555 0100 ext 5", .notE164, "extension"),
        .init("+1 415 555 0100#", .notE164, "hash"),
        .init("+1/415/555/0100", .notE164, "slashes"),
        .init("+1_415_555_0100", .notE164, "underscores"),
        .init("+0123456789", .notE164, "leading 0 after +"),
        .init("+00441234567890", .notE164, "+00"),
        .init("tel:+14155550100", .notE164, "tel URI"),
        .init("+１４１５５５５０１００", .notE164, "fullwidth digits"),
        .init("+1415555０100", .notE164, "one fullwidth digit"),
        .init("+١٤١٥٥٥٥٠١٠٠", .notE164, "Arabic-Indic digits"),
        .init("+१४१५५५५०१००", .notE164, "Devanagari digits"),
        .init("+1 415\u{00A0}555 0100", .notE164, "no-break space"),
        .init("+1\u{200B}4155550100", .notE164, "zero-width space"),
        .init("+14155550100\u{0301}", .notE164, "combining accent"),
        .init("+1415555\u{0000}0100", .notE164, "NUL"),
        .init("+14155550100👍", .notE164, "emoji"),
        .init("\u{FEFF}+14155550100", .notE164, "byte-order mark"),
        .init(String(repeating: "1", count: 1000), .notE164, "1000 digits without +"),
        .init("+" + String(repeating: "1", count: 1000), .notE164, "1000 digits"),
        .init("+1 415 555 0100" + String(repeating: " ", count: 50), .notE164, "65 characters"),
        .init(String(repeating: "+", count: 10_000), .notE164, "10000 pluses"),
        // Unknown country calling codes.
        .init("+999123", .unknownCountryCode, "999"),
        .init("+80012345678", .unknownCountryCode, "universal freephone 800"),
        .init("+88212345678", .unknownCountryCode, "international networks 882"),
        .init("+2", .unknownCountryCode, "2 alone"),
        .init("+6901234", .unknownCountryCode, "690 Tokelau is not in the table"),
        // Wrong length.
        .init("+1", .invalidLength, "calling code only"),
        .init("+44", .invalidLength, "calling code only"),
        .init("+1415555010", .invalidLength, "NANP too short"),
        .init("+141555501000", .invalidLength, "NANP too long"),
        .init("+1234567890123456", .invalidLength, "16 digits"),
        .init("+4915123456789012", .invalidLength, "over 15 digits"),
        .init("+44791112345", .invalidLength, "UK mobile 9 digits"),
        .init("+4479111234567", .invalidLength, "UK mobile 11 digits"),
        .init("+4420794609", .invalidLength, "UK 8 digits"),
        .init("+3361234567", .invalidLength, "France 8 digits"),
        .init("+336123456789", .invalidLength, "France 10 digits"),
        .init("+3461234567", .invalidLength, "Spain 8 digits"),
        .init("+4912345", .invalidNumber, "Germany starting 12"),
        .init("+4930123", .invalidLength, "Germany 5 digits"),
        .init("+491512345678901", .invalidLength, "Germany mobile 13 digits"),
        .init("+4512345678", .invalidNumber, "Denmark starting 1"),
        .init("+452012345", .invalidLength, "Denmark 7 digits"),
        .init("+4851234567", .invalidLength, "Poland 8 digits"),
        .init("+391234", .invalidNumber, "Italy starting 1"),
        .init("+3906123", .invalidLength, "Italy 0 + 4 digits"),
        .init("+3912345678", .invalidNumber, "Italy starting 1"),
        .init("+3931234567", .invalidLength, "Italy mobile 8 digits"),
        .init("+43123", .invalidLength, "Austria 3 digits"),
        .init("+9198765432", .invalidLength, "India 8 digits"),
        .init("+9198765432101", .invalidLength, "India 11 digits"),
        .init("+551198765432", .invalidLength, "Brazil mobile 10 digits with 9"),
        .init("+55119876543210", .invalidLength, "Brazil 13 digits"),
        .init("+86138123456", .invalidLength, "China mobile 10 digits"),
        .init("+861381234567890", .invalidLength, "China mobile 13 digits"),
        .init("+8131234567", .invalidLength, "Japan 8 digits"),
        .init("+6141234567", .invalidLength, "Australia 8 digits"),
        .init("+614123456789", .invalidLength, "Australia 10 digits"),
        .init("+3530871234567", .invalidNumber, "Ireland with trunk 0"),
        // Invalid leading digits.
        .init("+10555550100", .invalidNumber, "NANP area code starting 0"),
        .init("+11555550100", .invalidNumber, "NANP area code starting 1"),
        .init("+14151550100", .invalidNumber, "NANP exchange starting 1"),
        .init("+14150550100", .invalidNumber, "NANP exchange starting 0"),
        .init("+4407911123456", .invalidNumber, "UK with trunk 0"),
        .init("+44 (0) 20 7946 0958", .invalidNumber, "UK with (0)"),
        .init("+44412345678", .invalidNumber, "UK starting 4"),
        .init("+33012345678", .invalidNumber, "France with trunk 0"),
        .init("+49015123456789", .invalidNumber, "Germany with trunk 0"),
        .init("+49112345678", .invalidNumber, "Germany starting 11"),
        .init("+910987654321", .invalidNumber, "India with trunk 0"),
        .init("+5501987654321", .invalidNumber, "Brazil area code starting 0"),
        .init("+551188765432", .invalidNumber, "Brazil 10 digits with 8"),
        .init("+8601012345678", .invalidNumber, "China with trunk 0"),
        .init("+81012345678", .invalidNumber, "Japan with trunk 0"),
        .init("+8171234567", .invalidLength, "Japan 8 digits"),
        .init("+61512345678", .invalidNumber, "Australia starting 5"),
        .init("+61012345678", .invalidNumber, "Australia with trunk 0"),
        .init("+75123456789", .invalidNumber, "Russia starting 5"),
        .init("+79123456789" + "0", .invalidLength, "Russia 11 digits"),
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
