import Foundation

/// An App Attest assertion as a proof of the app, sent in ``AuthHeaders/appVerification`` in place of a silent-push
/// proof: `appattest.<keyId>.<challenge>.<assertion>`, the key id as `DCAppAttestService` names it, a fresh
/// ``AppAttestChallenge``, and the assertion (`generateAssertion(_:clientDataHash:)`) in base64url, made over the
/// SHA-256 of ``clientData(challenge:destination:)``. One proof admits one send.
public enum AppAttestProof {
    /// The first field of the header value, which tells an assertion from a silent-push proof.
    public static let scheme = "appattest"

    /// The client data an assertion signs: the challenge, and the address the code goes to as Verity writes it (the
    /// E.164 number, or the lower-cased email address), so the assertion is good for that one send only.
    public static func clientData(challenge: String, destination: String) -> Data {
        Data("verity-app-attest\n\(challenge)\n\(destination)".utf8)
    }

    /// The header value for `assertion` by the key `keyId` over `challenge`.
    public static func header(keyId: String, challenge: String, assertion: Data) -> String {
        "\(scheme).\(keyId).\(challenge).\(Base64URL.encode(assertion))"
    }
}
