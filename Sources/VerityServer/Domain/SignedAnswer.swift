import VerityCore

/// A device's signed answer to a push challenge, in its protocol's signature dialect: the one place where answer
/// protocols differ, as a parameter of the one rule in ``ChallengeService`` (the factor verified and not suspended,
/// the challenge its own, the signature by the factor's key over what the device was shown, a `required` challenge
/// approved only by the user-verification key). A face whose devices sign another way names its dialect beside its
/// other translations.
enum SignedAnswer: Sendable {
    /// VerityKit's: the answer's statements, signed over a ``ChallengeSigningPayload`` by the key they name.
    case statements(RespondChallengeRequest)
    /// A JWS by the factor's device key, at most `dialect`'s longest answer, whose claims repeat every one of the
    /// dialect's answer fields as `shown` has it (the challenge as the device was shown it, in its protocol's words;
    /// it names the challenge) and state `status` `approved` or `denied`. Such a protocol has one key per device, so
    /// the answer is by the proof-of-possession key and states nothing else.
    case shownClaims(token: String, shown: [String: JSONValue], dialect: FactorDialect)
}
