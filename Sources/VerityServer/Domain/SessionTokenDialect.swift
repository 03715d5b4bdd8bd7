import VerityCore

/// How a face's clients expect a session token to read, where that differs from Verity's own: its issuer and
/// audience, and the claims they look for. The rules are the same for every dialect (the project's ES256 keys, its
/// session lifetime, rotation of refresh tokens, revocation); only the wording changes.
///
/// The Firebase face's tokens, for example, name `https://securetoken.google.com/<project>` as issuer and carry
/// `user_id`, `phone_number` and `firebase`, which the Firebase SDKs and firebase-admin read.
struct SessionTokenDialect: Sendable {
    /// The `iss` of the tokens.
    var issuer: String
    /// The `aud` of the tokens.
    var audience: String
    /// Claims added from the user.
    var claims: @Sendable (User) -> [String: JSONValue]
    /// Claims added to the session token a step-up issues (Descope's `su`).
    var stepUpClaims: [String: JSONValue] = [:]
    /// When set, refresh tokens are handed out as a JWT signed like the session token and carrying these claims,
    /// for clients that validate the refresh token themselves (Descope's SDKs). The opaque refresh token rides in
    /// its ``SessionService/wrappedRefreshClaim`` claim, so rotation, reuse detection and revocation are the native
    /// ones; the signature only tells the client the token is the server's.
    var refreshTokenClaims: [String: JSONValue]? = nil
    /// The claim a session's own claims (chosen by the client when it started the sign-in) are nested under, apart
    /// from the user's custom claims, which the backend set (Descope's `nsec`, "non-secure"); nil puts them beside
    /// the user's claims, which win a name both have.
    var sessionClaimsKey: String? = nil

    /// Claim names that only some of this dialect's tokens carry (`su` after a step-up, `drn` and the wrapped token
    /// of a refresh token), which claims a client asks for may therefore not use: they would say what the server
    /// did not. (What ``claims`` sets is in every token and always wins.)
    var ownClaimNames: Set<String> {
        Set(stepUpClaims.keys).union((refreshTokenClaims ?? [:]).keys).union([SessionService.wrappedRefreshClaim])
    }
}
