import VerityCore

/// Where a factor protocol really differs from Verity's own: each field is a named parameter of one rule in
/// ``FactorService`` or ``ChallengeService``, so a face names its protocol's dialect and holds no rule of its own.
struct FactorDialect: Sendable {
    /// What the protocol calls a user id, for errors (`userId`, Twilio's `Identity`).
    var userIdName: String
    /// How many characters a user id has.
    var userIdLengths: ClosedRange<Int>
    /// Whether a user id may hold the character; no dialect takes a line break or a NUL.
    var userIdCharacter: @Sendable (Character) -> Bool
    /// What ``userIdLengths`` and ``userIdCharacter`` allow, in words.
    var userIdRule: String
    /// What the protocol calls an enrollment token's lifetime, for errors (`expiresIn`, Twilio's `Ttl`).
    var enrollmentLifetimeName: String
    /// Seconds an enrollment token may live, and how long it lives unless the backend says.
    var enrollmentLifetimes: ClosedRange<Int>
    var defaultEnrollmentLifetime: Int
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
        userIdName: "userId", userIdLengths: 1...128, userIdCharacter: { _ in true },
        userIdRule: "1 to 128 characters on one line", enrollmentLifetimeName: "expiresIn",
        enrollmentLifetimes: 60...3600, defaultEnrollmentLifetime: 600,
        shortestChallengeLifetime: ChallengeService.shortestLifetime, answerFields: [], longestAnswer: 4096)

    /// Twilio Verify Push and TOTP: an entity's identity is 8 to 64 letters, digits and dashes (a UUID fits); an
    /// access token lives 60 to 300 seconds, 60 by default; a challenge may expire any second up to the longest
    /// (Twilio documents only the latest `ExpirationDate`); the SDKs' answer is a JWS of at most 5456 characters over
    /// the fields Twilio lists in `Twilio-Verify-Signature-Fields`.
    static let twilio = FactorDialect(
        userIdName: "Identity", userIdLengths: 8...64,
        userIdCharacter: { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") },
        userIdRule: "8 to 64 letters, digits and dashes", enrollmentLifetimeName: "Ttl", enrollmentLifetimes: 60...300,
        defaultEnrollmentLifetime: 60, shortestChallengeLifetime: 1,
        answerFields: [
            "sid", "account_sid", "service_sid", "entity_sid", "identity", "factor_sid", "date_created",
            "expiration_date", "details", "hidden_details",
        ], longestAnswer: 5456)

    /// `userId` if it is a user id of this protocol; `invalid_request` otherwise.
    func validUserId(_ userId: String) throws -> String {
        guard userIdLengths.contains(userId.unicodeScalars.count),
            userId.allSatisfy({ !$0.isNewline && $0 != "\0" && userIdCharacter($0) })
        else { throw VerityError(.invalidRequest, "`\(userIdName)` must be \(userIdRule).") }
        return userId
    }
}
