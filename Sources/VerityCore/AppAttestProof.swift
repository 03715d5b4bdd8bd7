import Foundation

/// An App Attest assertion as a proof of the app, sent in ``AuthHeaders/appVerification`` in place of a silent-push
/// proof: `appattest.<keyId>.<challenge>.<assertion>`, the key id as `DCAppAttestService` names it, a fresh
/// ``AppAttestChallenge``, and the assertion (`generateAssertion(_:clientDataHash:)`) in base64url, made over the
/// SHA-256 of ``clientData(challenge:)``. One proof admits one send.
public enum AppAttestProof {
    /// The first field of the header value, which tells an assertion from a silent-push proof.
    public static let scheme = "appattest"

    /// The client data an assertion signs: the server's single-use challenge, so the assertion is good for one send
    /// only. (Not the address: a step-up or a possession step sends to an address the app need not know.)
    public static func clientData(challenge: String) -> Data {
        Data("verity-app-attest\n\(challenge)".utf8)
    }

    /// The header value for `assertion` by the key `keyId` over `challenge`.
    public static func header(keyId: String, challenge: String, assertion: Data) -> String {
        "\(scheme).\(keyId).\(challenge).\(Base64URL.encode(assertion))"
    }
}
