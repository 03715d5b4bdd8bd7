/// A validated international phone number in E.164 form.
///
/// Create one with ``init(parsing:)``. The parser accepts only E.164 input: a leading `+`, a country calling code
/// and the national significant number, optionally grouped with spaces, dashes, dots and parentheses
/// (`+1 (415) 555-0100`). National formats (`(415) 555-0100`), the international call prefix `00`, letters and
/// non-ASCII characters are rejected.
///
/// Validation is data-driven: a single table (`PhoneNumber.NumberingPlan.all`) maps each supported country calling
/// code to its region and to the lengths and leading digits its national numbers may have. The rules cover
/// subscriber numbers (geographic and mobile), following ITU publications and libphonenumber metadata; some
/// special-service numbers (short codes, some premium or toll-free ranges) may be rejected, and calling codes missing
/// from the table are reported as ``PhoneNumberError/unknownCountryCode``.
///
/// Interpolating a `PhoneNumber` into a string yields ``masked``, so numbers do not leak into logs by accident;
/// use ``e164`` when the real value is needed.
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// Inputs with more UTF-8 bytes than this are rejected before any other work is done.
    public static let maximumInputLength = 64

    /// The most digits an E.164 number may have, country calling code included.
    public static let maximumDigits = 15

    /// The number in E.164 form: `+`, the country calling code and the national number, digits only,
    /// for example `+14155550100`.
    public let e164: String

    /// The country calling code, for example `1` for the NANP or `44` for the United Kingdom.
    public let countryCallingCode: Int

    /// The ISO 3166-1 alpha-2 code of the region the number belongs to, for example `US`, `CA` or `GB`.
    ///
    /// Where several regions share a calling code the region is chosen from the leading digits of the national
    /// number (NANP area codes, UK Crown Dependencies, Kazakhstan within +7, …), falling back to the main region.
    public let regionCode: String

    /// The national significant number: the digits after the country calling code, without a trunk prefix.
    public let nationalNumber: String

    /// Parses and validates an E.164 phone number.
    ///
    /// - Parameter input: The number, such as `+14155550100` or `+44 20 7946 0958`. Surrounding whitespace is
    ///   ignored; spaces, `-`, `.`, `(` and `)` between the digits are removed.
    /// - Throws: ``PhoneNumberError`` describing why the input is not an acceptable number.
    public init(parsing input: String) throws(PhoneNumberError) {
        guard input.utf8.count <= Self.maximumInputLength else { throw .notE164 }
        let digits = try Self.digits(of: input)
        guard let first = digits.first, first != 0 else { throw .notE164 }
        guard digits.count <= Self.maximumDigits else { throw .invalidLength }
        guard let match = NumberingPlan.plan(forDigits: digits) else { throw .unknownCountryCode }
        let plan = match.plan
        let national = Array(digits[match.callingCodeLength...])
        try plan.validate(national)

        let nationalNumber = String(decoding: national.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
        self.countryCallingCode = plan.callingCode
        self.regionCode = plan.region(for: national)
        self.nationalNumber = nationalNumber
        self.e164 = "+\(plan.callingCode)\(nationalNumber)"
    }

    /// The number with everything but the `+`, the country calling code and the last two digits replaced by `*`,
    /// for example `+1********00`. Safe to write to logs.
    public var masked: String {
        let shown = nationalNumber.count > 2 ? 2 : 0
        let hidden = String(repeating: "*", count: nationalNumber.count - shown)
        return "+\(countryCallingCode)\(hidden)\(nationalNumber.suffix(shown))"
    }

    /// The ``masked`` form, so that interpolating a number into a log message does not reveal it.
    public var description: String { masked }

    /// Extracts the digit values (0–9) of an E.164 input, dropping the `+` and formatting characters.
    private static func digits(of input: String) throws(PhoneNumberError) -> [UInt8] {
        var bytes = input.utf8[...]
        while let last = bytes.last, isWhitespace(last) { bytes.removeLast() }
        while let first = bytes.first, isWhitespace(first) { bytes.removeFirst() }
        guard bytes.first == UInt8(ascii: "+") else { throw .notE164 }

        var digits: [UInt8] = []
        digits.reserveCapacity(bytes.count)
        for byte in bytes.dropFirst() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte - UInt8(ascii: "0"))
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"):
                continue
            default:
                throw .notE164
            }
        }
        return digits
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }
}

extension PhoneNumber {
    /// The rules for one country calling code: its main region and which national numbers are valid.
    struct NumberingPlan: Sendable {
        /// One shape of valid national number: digits it must start with, and how many digits it has in total.
        struct Rule: Sendable {
            let leadingDigits: LeadingDigits
            let lengths: ClosedRange<Int>
        }

        /// The country calling code, 1–3 digits.
        let callingCode: Int
        /// The main region of the calling code.
        let regionCode: String
        /// A national number is valid when it satisfies at least one rule.
        let rules: [Rule]
        /// Other regions sharing the calling code, keyed by the leading digits of the national number.
        let regionsByPrefix: [String: String]

        init(
            _ callingCode: Int,
            _ regionCode: String,
            _ rules: (leadingDigits: String, lengths: ClosedRange<Int>)...,
            regions: [String: [String]] = [:]
        ) {
            self.callingCode = callingCode
            self.regionCode = regionCode
            self.rules = rules.map { Rule(leadingDigits: LeadingDigits($0.leadingDigits), lengths: $0.lengths) }
            var byPrefix: [String: String] = [:]
            for (region, prefixes) in regions {
                for prefix in prefixes { byPrefix[prefix] = region }
            }
            self.regionsByPrefix = byPrefix
        }

        /// Checks a national significant number (digit values 0–9) against the rules.
        func validate(_ national: [UInt8]) throws(PhoneNumberError) {
            let candidates = rules.filter { $0.leadingDigits.admits(national) }
            // No rule accepts these leading digits (this includes a trunk prefix 0 kept after the country code).
            guard !candidates.isEmpty else { throw .invalidNumber }
            guard candidates.contains(where: { $0.lengths.contains(national.count) }) else { throw .invalidLength }
        }

        /// The region of a valid national number: the longest matching entry of ``regionsByPrefix``, else the main
        /// region.
        func region(for national: [UInt8]) -> String {
            guard !regionsByPrefix.isEmpty else { return regionCode }
            let text = String(decoding: national.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
            var length = min(text.count, Self.longestRegionPrefix)
            while length > 0 {
                if let region = regionsByPrefix[String(text.prefix(length))] { return region }
                length -= 1
            }
            return regionCode
        }

        static let longestRegionPrefix = 6

        /// Finds the plan whose calling code is the longest prefix (1–3 digits) of `digits`, returning it with the
        /// calling code's length.
        static func plan(forDigits digits: [UInt8]) -> (plan: NumberingPlan, callingCodeLength: Int)? {
            var length = min(3, digits.count)
            while length > 0 {
                let code = digits.prefix(length).reduce(0) { $0 * 10 + Int($1) }
                if let plan = byCallingCode[code] { return (plan: plan, callingCodeLength: length) }
                length -= 1
            }
            return nil
        }

        static let byCallingCode: [Int: NumberingPlan] = Dictionary(
            all.map { ($0.callingCode, $0) },
            uniquingKeysWith: { first, _ in first }
        )

        /// Every supported calling code.
        ///
        /// Leading-digit patterns: a digit, `X` for any digit, or a class such as `[2-9]` or `[1-35689]`; `|` separates
        /// alternatives. A pattern constrains only as many digits as it has, and every rule's shortest length is at
        /// least as long as its patterns (checked by the tests).
        static let all: [NumberingPlan] = [
            // North American Numbering Plan: NPA-NXX-XXXX, area code and exchange never start with 0 or 1.
            NumberingPlan(1, "US", ("[2-9]XX[2-9]", 10...10), regions: nanpRegions),
            // Russia and Kazakhstan share +7; Kazakh numbers start with 7 (and the 33622 block).
            NumberingPlan(7, "RU", ("[347-9]", 10...10), regions: ["KZ": ["7", "33622"]]),
            NumberingPlan(20, "EG", ("1[0-25]", 10...10), ("1[35]|[2-9]", 8...9)),
            NumberingPlan(27, "ZA", ("[1-8]", 9...9)),
            NumberingPlan(30, "GR", ("[2-9]", 10...10)),
            NumberingPlan(31, "NL", ("[1-7]", 9...9), ("970", 11...11)),
            NumberingPlan(32, "BE", ("4[5-9]", 9...9), ("[1-9]", 8...8)),
            NumberingPlan(33, "FR", ("[1-9]", 9...9)),
            NumberingPlan(34, "ES", ("400|[5-9]", 9...9)),
            NumberingPlan(36, "HU", ("[1-9]", 8...8), ("[2357]0|3[01]", 9...9)),
            // Italian fixed-line numbers keep their leading 0 after +39.
            NumberingPlan(39, "IT", ("0", 6...11), ("3", 9...10), ("43", 10...10), regions: ["VA": ["06698"]]),
            NumberingPlan(40, "RO", ("[2-9]", 9...9)),
            NumberingPlan(41, "CH", ("[2-9]", 9...9)),
            NumberingPlan(43, "AT", ("[1-9]", 4...13)),
            NumberingPlan(44, "GB", ("7", 10...10), ("[1-3589]", 9...10), regions: britishCrownDependencies),
            NumberingPlan(45, "DK", ("[2-9]", 8...8)),
            NumberingPlan(46, "SE", ("7", 9...9), ("[1-689]", 7...9)),
            NumberingPlan(47, "NO", ("[2-9]", 8...8), regions: ["SJ": ["79"]]),
            NumberingPlan(48, "PL", ("[1-9]", 9...9)),
            // German numbers vary in length: mobiles (15x, 16x, 17x) have 10–11 digits, fixed lines 6–13.
            NumberingPlan(49, "DE", ("1[5-7]", 10...11), ("[2-9]", 6...13)),
            NumberingPlan(51, "PE", ("9", 9...9), ("[1-8]", 8...8)),
            NumberingPlan(52, "MX", ("[2-9]", 10...10)),
            // Argentine mobiles are dialled from abroad with a 9 before the area code.
            NumberingPlan(54, "AR", ("9", 11...11), ("[1-8]", 10...10)),
            // Brazil: two-digit area code, then 9 + 8 digits for mobiles or 8 digits for fixed lines.
            NumberingPlan(55, "BR", ("[1-9][1-9]9", 11...11), ("[1-9][1-9][2-57]", 10...10)),
            NumberingPlan(56, "CL", ("[2-9]", 9...9)),
            NumberingPlan(57, "CO", ("3|60|94", 10...10), ("46", 8...8)),
            NumberingPlan(58, "VE", ("[2-6]", 10...10)),
            NumberingPlan(60, "MY", ("1", 9...10), ("[3-9]", 8...9)),
            NumberingPlan(61, "AU", ("[2-478]", 9...9)),
            NumberingPlan(62, "ID", ("8", 9...12), ("[2-79]", 7...11)),
            NumberingPlan(63, "PH", ("[89]", 10...10), ("[2-8]", 8...9)),
            NumberingPlan(64, "NZ", ("2", 8...10), ("[3-9]", 8...8)),
            NumberingPlan(65, "SG", ("[689]", 8...8)),
            NumberingPlan(66, "TH", ("14|[689]", 9...9), ("[1-7]", 8...8)),
            // Japan: 9-digit fixed lines, 10-digit mobiles and IP phones (50, 60, 70, 80, 90).
            NumberingPlan(81, "JP", ("[1-9]", 9...9), ("[5-9]0", 10...10)),
            NumberingPlan(82, "KR", ("1", 9...10), ("2", 8...9), ("[3-7]", 9...10)),
            NumberingPlan(84, "VN", ("2", 10...10), ("1[246]|[35789]", 9...9)),
            // China: 11-digit mobiles starting 1[3-9]; fixed lines are area code + 7–8 digit subscriber number.
            NumberingPlan(86, "CN", ("1[3-9]", 11...11), ("10|2", 10...10), ("[3-9]", 9...11)),
            NumberingPlan(90, "TR", ("[2-58]", 10...10)),
            // India: 10 digits; mobiles start with 6–9, fixed lines with an area code starting 1–8.
            NumberingPlan(91, "IN", ("[1-9]", 10...10)),
            NumberingPlan(92, "PK", ("3", 10...10), ("[24-9]", 9...10)),
            NumberingPlan(94, "LK", ("[1-9]", 9...9)),
            NumberingPlan(212, "MA", ("[5-7]", 9...9)),
            NumberingPlan(213, "DZ", ("[5-79]", 9...9), ("[1-4]", 8...8)),
            NumberingPlan(216, "TN", ("[2-9]", 8...8)),
            NumberingPlan(233, "GH", ("[235]", 9...9)),
            NumberingPlan(234, "NG", ("[2789]", 10...10)),
            NumberingPlan(251, "ET", ("[1-57-9]", 9...9)),
            NumberingPlan(254, "KE", ("[17]", 9...9), ("[2-6]", 7...9)),
            NumberingPlan(255, "TZ", ("[2-7]", 9...9)),
            NumberingPlan(256, "UG", ("[2-47]", 9...9)),
            NumberingPlan(351, "PT", ("16|[2-9]", 9...9)),
            NumberingPlan(352, "LU", ("6", 9...9), ("[2-57-9]", 4...11)),
            NumberingPlan(353, "IE", ("8", 9...9), ("[1-79]", 7...10)),
            NumberingPlan(354, "IS", ("[4-8]", 7...7), ("3", 9...9)),
            NumberingPlan(355, "AL", ("6", 9...9), ("[2-58]", 8...8)),
            NumberingPlan(356, "MT", ("[2-9]", 8...8)),
            NumberingPlan(357, "CY", ("[2-9]", 8...8)),
            NumberingPlan(358, "FI", ("4|50", 6...10), ("[1-35689]", 5...9), regions: ["AX": ["18"]]),
            NumberingPlan(359, "BG", ("8[7-9]|9[89]", 9...9), ("[2-9]", 6...8)),
            NumberingPlan(370, "LT", ("[3-9]", 8...8)),
            NumberingPlan(371, "LV", ("[2689]", 8...8)),
            NumberingPlan(372, "EE", ("5|8", 8...8), ("[3-8]", 7...7)),
            NumberingPlan(373, "MD", ("[2-7]", 8...8)),
            NumberingPlan(374, "AM", ("[1-9]", 8...8)),
            NumberingPlan(377, "MC", ("[67]", 9...9), ("[3489]", 8...8)),
            NumberingPlan(380, "UA", ("[3-9]", 9...9)),
            NumberingPlan(381, "RS", ("6", 8...10), ("[1-3]", 7...12)),
            NumberingPlan(382, "ME", ("[2-6]", 8...8)),
            NumberingPlan(385, "HR", ("[1-59]", 8...9)),
            NumberingPlan(386, "SI", ("[1-7]", 8...8)),
            NumberingPlan(387, "BA", ("6", 8...9), ("[3-5]", 8...8)),
            NumberingPlan(389, "MK", ("[2-47]", 8...8)),
            NumberingPlan(420, "CZ", ("[2-9]", 9...9)),
            NumberingPlan(421, "SK", ("[2-689]", 9...9)),
            NumberingPlan(423, "LI", ("6", 9...9), ("[237]", 7...7)),
            NumberingPlan(502, "GT", ("[2-8]", 8...8)),
            NumberingPlan(506, "CR", ("[2-8]", 8...8)),
            NumberingPlan(507, "PA", ("6", 8...8), ("[1-9]", 7...7)),
            NumberingPlan(591, "BO", ("[2-7]", 8...8)),
            NumberingPlan(593, "EC", ("9", 9...9), ("[2-7]", 8...8)),
            NumberingPlan(595, "PY", ("9", 9...9), ("[2-8]", 7...9)),
            NumberingPlan(598, "UY", ("[1249]", 8...8)),
            NumberingPlan(852, "HK", ("[2-9]", 8...8)),
            NumberingPlan(880, "BD", ("1", 10...10), ("[2-9]", 6...10)),
            NumberingPlan(886, "TW", ("9", 9...9), ("[2-8]", 8...9)),
            NumberingPlan(961, "LB", ("[1-9]", 7...8)),
            NumberingPlan(962, "JO", ("7|427", 9...9), ("[2-6]|8", 8...8)),
            NumberingPlan(965, "KW", ("[24569]", 8...8)),
            NumberingPlan(966, "SA", ("[15]", 9...9)),
            NumberingPlan(968, "OM", ("1505|[279]", 8...8)),
            NumberingPlan(971, "AE", ("5", 9...9), ("[2-4679]", 8...8)),
            NumberingPlan(972, "IL", ("5|7", 9...9), ("[2-489]", 8...8)),
            NumberingPlan(973, "BH", ("[1367]", 8...8)),
            NumberingPlan(974, "QA", ("[3-7]", 8...8)),
            NumberingPlan(977, "NP", ("9", 10...10), ("[1-9]", 8...8)),
            NumberingPlan(994, "AZ", ("[1-79]", 9...9)),
            NumberingPlan(995, "GE", ("[3-57]", 9...9)),
        ]

        /// NANP area codes outside the United States. Every other valid area code is reported as `US`.
        static let nanpRegions: [String: [String]] = [
            "CA": [
                "204", "226", "236", "249", "250", "257", "263", "273", "289", "306", "343", "354", "365", "367", "368",
                "382", "403", "416", "418", "428", "431", "437", "438", "450", "468", "474", "506", "514", "519", "548",
                "579", "581", "584", "587", "600", "604", "613", "622", "639", "647", "672", "683", "705", "709", "742",
                "753", "778", "780", "782", "807", "819", "825", "867", "873", "879", "902", "905", "942",
            ],
            "AG": ["268"], "AI": ["264"], "AS": ["684"], "BB": ["246"], "BM": ["441"], "BS": ["242"], "DM": ["767"],
            "DO": ["809", "829", "849"], "GD": ["473"], "GU": ["671"], "JM": ["658", "876"], "KN": ["869"],
            "KY": ["345"], "LC": ["758"], "MP": ["670"], "MS": ["664"], "PR": ["787", "939"], "SX": ["721"],
            "TC": ["649"], "TT": ["868"], "VC": ["784"], "VG": ["284"], "VI": ["340"],
        ]

        /// Guernsey, Jersey and the Isle of Man share +44 with the United Kingdom.
        static let britishCrownDependencies: [String: [String]] = [
            "GG": ["1481", "7781", "7839", "79111", "79117"],
            "JE": ["1534", "7509", "77003", "77007", "77008", "7797", "7829", "7937"],
            "IM": ["1624", "74576", "7524", "7624"],
        ]
    }

    /// A compiled leading-digits pattern such as `4[5-9]|50`.
    ///
    /// Each alternative is a sequence of digit sets; a number is admitted when, for some alternative, each of its first
    /// digits lies in the corresponding set. A number shorter than the pattern is admitted if the digits it has match.
    struct LeadingDigits: Sendable {
        /// Per alternative, one bit mask per position: bit `d` set means digit `d` is allowed.
        let alternatives: [[UInt16]]
        /// False when the source pattern had a syntax error; such alternatives are dropped (and never match).
        let isWellFormed: Bool

        /// The length of the longest alternative.
        var maximumLength: Int { alternatives.map(\.count).max() ?? 0 }

        init(_ pattern: String) {
            var alternatives: [[UInt16]] = []
            var wellFormed = true
            for source in pattern.split(separator: "|", omittingEmptySubsequences: false) {
                if let sets = Self.compile(source), !sets.isEmpty {
                    alternatives.append(sets)
                } else {
                    wellFormed = false
                }
            }
            self.alternatives = alternatives
            self.isWellFormed = wellFormed && !alternatives.isEmpty
        }

        /// Whether the leading digits of `digits` (values 0–9) fit one of the alternatives.
        func admits(_ digits: [UInt8]) -> Bool {
            alternatives.contains { sets in
                zip(sets, digits).allSatisfy { set, digit in digit < 10 && set & (1 << UInt16(digit)) != 0 }
            }
        }

        private static func compile(_ source: Substring) -> [UInt16]? {
            let allDigits: UInt16 = 0x3FF
            var sets: [UInt16] = []
            var iterator = source.utf8.makeIterator()
            while let byte = iterator.next() {
                switch byte {
                case UInt8(ascii: "X"):
                    sets.append(allDigits)
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    sets.append(1 << UInt16(byte - UInt8(ascii: "0")))
                case UInt8(ascii: "["):
                    var set: UInt16 = 0
                    var previous: UInt8?
                    var inRange = false
                    var closed = false
                    while let member = iterator.next() {
                        if member == UInt8(ascii: "]") {
                            closed = true
                            break
                        } else if member == UInt8(ascii: "-") {
                            guard previous != nil, !inRange else { return nil }
                            inRange = true
                        } else if let digit = Self.digitValue(member) {
                            if inRange, let low = previous {
                                guard low <= digit else { return nil }
                                for value in low...digit { set |= 1 << UInt16(value) }
                                inRange = false
                                previous = nil
                            } else {
                                set |= 1 << UInt16(digit)
                                previous = digit
                            }
                        } else {
                            return nil
                        }
                    }
                    guard closed, !inRange, set != 0 else { return nil }
                    sets.append(set)
                default:
                    return nil
                }
            }
            return sets
        }

        private static func digitValue(_ byte: UInt8) -> UInt8? {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? byte - UInt8(ascii: "0") : nil
        }
    }
}
