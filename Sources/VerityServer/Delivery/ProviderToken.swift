import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// Mints the JSON Web Tokens that authenticate Verity to push providers: ES256 tokens for APNs, RS256 assertions for
/// Google's OAuth 2.0 token endpoint.
enum ProviderToken {
    /// An APNs provider authentication token: header `{"alg":"ES256","kid":keyID}`, claims `{"iat":…,"iss":teamID}`,
    /// signed with the `.p8` key; the signature is the raw `r || s` of RFC 7518 §3.4.
    static func apns(teamID: String, keyID: String, issuedAt: Int, key: P256.Signing.PrivateKey) throws -> String {
        let claims = APNsClaims(iss: teamID, iat: issuedAt)
        return try CompactJWS.sign(payload: Array(encoder.encode(claims)), keyID: keyID, type: nil, using: key)
    }

    /// A Google service-account assertion for the JWT bearer grant (RFC 7523): header `{"alg":"RS256","kid":…,
    /// "typ":"JWT"}`, claims `{iss, scope, aud, iat, exp}`, signed with RSASSA-PKCS1-v1_5 and SHA-256.
    static func googleAssertion(
        claims: GoogleAssertionClaims, keyID: String?, key: _RSA.Signing.PrivateKey
    ) throws -> String {
        let header = RS256Header(alg: "RS256", kid: keyID, typ: "JWT")
        let signingInput =
            "\(Base64URL.encode(try encoder.encode(header))).\(Base64URL.encode(try encoder.encode(claims)))"
        let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
    }

    /// The claims Google's token endpoint expects in a service-account assertion.
    struct GoogleAssertionClaims: Codable, Sendable, Equatable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    private struct APNsClaims: Encodable {
        var iss: String
        var iat: Int
    }

    private struct RS256Header: Encodable {
        var alg: String
        var kid: String?
        var typ: String
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
