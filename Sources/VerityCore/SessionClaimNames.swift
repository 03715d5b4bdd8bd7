/// The claims of a Verity session token.
public enum SessionClaimNames {
    /// The names a session token sets itself (registered JWT claims and Verity's own); a user's custom claims may
    /// not use them, and a verifier reads everything else as custom claims.
    public static let reserved: Set<String> = [
        "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "amr", "acr", "roles", "permissions", "sid", "auth_time",
    ]
}
