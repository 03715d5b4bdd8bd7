import VerityCore

/// Where a factor protocol really differs from Verity's own: each field is a named parameter of one rule in
/// ``FactorService`` or ``ChallengeService``, so a face names its protocol's dialect and holds no rule of its own.
struct FactorDialect: Sendable {
    /// A field a rule speaks of in its errors, by its name in Verity's own API (`period` and `window`, a TOTP
    /// factor's time step and ± steps, and `lifetime`, a push sent again's, only other protocols set).
    enum Field: String, Sendable {
        case userId, expiresIn, friendlyName, pushToken, digits, period, window, lifetime
    }

    /// What the protocol calls a field where it does not use Verity's name.
    var renamed: [Field: String]
    /// How many characters a user id has.
    var userIdLengths: ClosedRange<Int>
    /// Whether a user id may hold the character; no dialect takes a line break or a NUL.
    var userIdCharacter: @Sendable (Character) -> Bool
    /// What ``userIdLengths`` and ``userIdCharacter`` allow, in words.
    var userIdRule: String
    /// Seconds an enrollment token may live, and how long it lives unless the backend says.
    var enrollmentLifetimes: ClosedRange<Int>
    var defaultEnrollmentLifetime: Int
    /// How many characters a factor's friendly name has, after the white space around it is trimmed.
    var friendlyNameLengths: ClosedRange<Int>
    /// How many time steps either side of now a TOTP factor may take a code from, and how many unless it says.
    var totpWindows: ClosedRange<Int>
    var defaultTOTPWindow: Int
    /// Seconds a challenge's push sent again may wait for delivery, and how long unless the backend says.
    var pushAgainLifetimes: ClosedRange<Int>
    var defaultPushAgainLifetime: Int
    /// The shortest a challenge may wait for its answer, in seconds (the longest is
    /// ``ChallengeService/longestLifetime`` for every protocol).
    var shortestChallengeLifetime: Int
    /// The top-level fields of a challenge that a device answering with ``SignedAnswer/shownClaims(token:shown:dialect:)``
    /// signs, each as it was shown; none for a protocol whose devices sign statements.
    var answerFields: [String]
    /// The longest signed answer read, in characters.
    var longestAnswer: Int

    /// Verity's own API and VerityKit.
    static let verity = FactorDialect(
        renamed: [:], userIdLengths: 1...128, userIdCharacter: { _ in true },
        userIdRule: "1 to 128 characters on one line", enrollmentLifetimes: 60...3600, defaultEnrollmentLifetime: 600,
        friendlyNameLengths: 1...100, totpWindows: 1...1, defaultTOTPWindow: 1,
        pushAgainLifetimes: 0...ChallengeService.longestLifetime,
        defaultPushAgainLifetime: ChallengeService.longestLifetime,
        shortestChallengeLifetime: ChallengeService.shortestLifetime, answerFields: [], longestAnswer: 4096)

    /// Twilio Verify Push and TOTP: an entity's identity is 8 to 64 letters, digits and dashes (a UUID fits); an
    /// access token lives 60 to 300 seconds, 60 by default; a factor's `FriendlyName` is at most 64 characters; a TOTP
    /// factor's `Config.Skew` is 0 to 2 steps; a notification (a push sent again) lives 0 to 300 seconds, 300 by
    /// default; a challenge may expire any second up to the longest (Twilio documents only the latest
    /// `ExpirationDate`); the SDKs' answer is a JWS of at most 5456 characters over the fields Twilio lists in
    /// `Twilio-Verify-Signature-Fields`.
    static let twilio = FactorDialect(
        renamed: [
            .userId: "Identity", .expiresIn: "Ttl", .friendlyName: "FriendlyName", .digits: "Config.CodeLength",
            .pushToken: "Config.NotificationToken", .period: "Config.TimeStep", .window: "Config.Skew",
            .lifetime: "Ttl",
        ],
        userIdLengths: 8...64, userIdCharacter: { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") },
        userIdRule: "8 to 64 letters, digits and dashes", enrollmentLifetimes: 60...300, defaultEnrollmentLifetime: 60,
        friendlyNameLengths: 1...64, totpWindows: 0...2, defaultTOTPWindow: 1, pushAgainLifetimes: 0...300,
        defaultPushAgainLifetime: 300, shortestChallengeLifetime: 1,
        answerFields: [
            "sid", "account_sid", "service_sid", "entity_sid", "identity", "factor_sid", "date_created",
            "expiration_date", "details", "hidden_details",
        ], longestAnswer: 5456)

    /// What the protocol calls `field`.
    func name(_ field: Field) -> String {
        renamed[field] ?? field.rawValue
    }

    /// `userId` if it is a user id of this protocol; `invalid_request` otherwise.
    func validUserId(_ userId: String) throws -> String {
        guard userIdLengths.contains(userId.unicodeScalars.count),
            userId.allSatisfy({ !$0.isNewline && $0 != "\0" && userIdCharacter($0) })
        else { throw VerityError(.invalidRequest, "`\(name(.userId))` must be \(userIdRule).") }
        return userId
    }

    /// `name` without the white space around it, if that is a friendly name of this protocol: one line of
    /// ``friendlyNameLengths`` characters; `invalid_request` otherwise, naming `field` (the factor's friendly name
    /// unless another field carries one, such as the name an access token gives the factor it creates).
    func validFriendlyName(_ name: String, as field: String? = nil) throws -> String {
        guard let trimmed = name.trimmedLine(of: friendlyNameLengths) else {
            throw VerityError(
                .invalidRequest,
                "`\(field ?? self.name(.friendlyName))` must be \(friendlyNameLengths.lowerBound) to "
                    + "\(friendlyNameLengths.upperBound) characters on one line.")
        }
        return trimmed
    }

    /// `window` if a TOTP factor of this protocol may take codes that many time steps either side of now;
    /// `invalid_request` otherwise.
    func validTOTPWindow(_ window: Int) throws -> Int {
        try value(window, of: .window, within: totpWindows, unit: "time steps")
    }

    /// `value` if `range` holds it; `invalid_request`, naming `field` as this protocol does, otherwise.
    func value(_ value: Int, of field: Field, within range: ClosedRange<Int>, unit: String) throws -> Int {
        guard range.contains(value) else {
            throw VerityError(
                .invalidRequest,
                "`\(name(field))` must be between \(range.lowerBound) and \(range.upperBound) \(unit).")
        }
        return value
    }
}
