import Foundation
import VerityCore

/// A signed-in session as ``VeritySession`` holds it: the tokens, the user, and what the session token says.
///
/// The claims are read from the session token's payload without checking its signature: they tell the app what to
/// show, not what to allow. Backends validate the token itself against the project's JWKS.
///
/// Printing a session shows neither token.
public struct Session: Sendable, Equatable {
    /// The session token (an ES256 JWT), sent as `Authorization: Bearer …` to the app's backend.
    public let sessionJwt: String
    /// The refresh token (`vrt_…`); each refresh replaces it.
    public let refreshToken: String
    /// The signed-in user, as the server last described them.
    public let user: User
    /// When ``sessionJwt`` expires.
    public let sessionExpiresAt: Date
    /// When ``refreshToken`` expires unless it is used.
    public let refreshExpiresAt: Date
    /// Whether the sign-in that opened this session created the user (show onboarding); kept across refreshes.
    public let firstSeen: Bool
    /// The session's identifier (`sid`, `ses_…`); it stays the same across refreshes and step-ups.
    public let sessionId: String
    /// The user's roles (`roles`) when the token was issued.
    public let roles: [String]
    /// The permissions of those roles (`permissions`).
    public let permissions: [String]
    /// How the user authenticated (`amr`), for example `["otp", "sms"]`, with the second factor after a step-up.
    public let amr: [String]
    /// The authentication context class (`acr`): `"mfa"` after a step-up, otherwise usually `nil`.
    public let acr: String?
    /// When the user authenticated (`auth_time`), if the token says.
    public let authTime: Date?
    /// Every claim of the session token, the registered ones included.
    public let claims: [String: JSONValue]

    /// The claims that are not among `SessionClaimNames.reserved`: the project's and the user's custom claims.
    public var customClaims: [String: JSONValue] {
        claims.filter { !SessionClaimNames.reserved.contains($0.key) }
    }

    /// Whether the session was stepped up with a second factor (``acr`` is `"mfa"`).
    public var isSteppedUp: Bool { acr == "mfa" }

    /// Whether ``roles`` contains `role`.
    ///
    /// - Parameter role: The role name.
    /// - Returns: `true` when the session token grants the role.
    public func hasRole(_ role: String) -> Bool {
        roles.contains(role)
    }

    /// Whether ``permissions`` contains `permission`.
    ///
    /// - Parameter permission: The permission name.
    /// - Returns: `true` when the session token grants the permission.
    public func hasPermission(_ permission: String) -> Bool {
        permissions.contains(permission)
    }

    /// Creates a session from its tokens, reading the claims from the session token's payload.
    ///
    /// - Parameters:
    ///   - sessionJwt: The session token, a compact JWS whose payload is a JSON object with at least `sid`.
    ///   - refreshToken: The refresh token.
    ///   - user: The signed-in user.
    ///   - sessionExpiresAt: When the session token expires.
    ///   - refreshExpiresAt: When the refresh token expires.
    ///   - firstSeen: Whether the sign-in that opened the session created the user.
    /// - Throws: ``VerityKitError/mapping(_:)`` when the session token is not a JWS, its payload is not a JSON object,
    ///   `sid` is missing, or a claim has the wrong type.
    public init(
        sessionJwt: String, refreshToken: String, user: User, sessionExpiresAt: Date, refreshExpiresAt: Date,
        firstSeen: Bool = false
    ) throws {
        let claims = try Self.decodePayload(of: sessionJwt)
        guard let sessionId = claims["sid"]?.stringValue else {
            throw VerityKitError.mapping("The session token has no session id (sid).")
        }
        self.sessionJwt = sessionJwt
        self.refreshToken = refreshToken
        self.user = user
        self.sessionExpiresAt = sessionExpiresAt
        self.refreshExpiresAt = refreshExpiresAt
        self.firstSeen = firstSeen
        self.sessionId = sessionId
        self.roles = try Self.strings(claims, "roles")
        self.permissions = try Self.strings(claims, "permissions")
        self.amr = try Self.strings(claims, "amr")
        switch claims["acr"] {
        case nil, .null?: self.acr = nil
        case .string(let value)?: self.acr = value
        default: throw VerityKitError.mapping("The session token's acr claim is not a string.")
        }
        switch claims["auth_time"] {
        case nil, .null?: self.authTime = nil
        case let value?:
            guard let seconds = value.doubleValue else {
                throw VerityKitError.mapping("The session token's auth_time claim is not a number.")
            }
            self.authTime = Date(timeIntervalSince1970: seconds)
        }
        self.claims = claims
    }

    /// The same session with another description of its user.
    func replacingUser(_ user: User) throws -> Session {
        try Session(
            sessionJwt: sessionJwt, refreshToken: refreshToken, user: user, sessionExpiresAt: sessionExpiresAt,
            refreshExpiresAt: refreshExpiresAt, firstSeen: firstSeen)
    }

    /// The payload of a compact JWS, decoded but not verified.
    private static func decodePayload(of token: String) throws -> [String: JSONValue] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else {
            throw VerityKitError.mapping("The session token is not a compact JWS.")
        }
        do {
            return try JSONDecoder().decode([String: JSONValue].self, from: Data(payload))
        } catch {
            throw VerityKitError.mapping("The session token's payload is not a JSON object.")
        }
    }

    /// A claim that must be an array of strings when present; empty when absent.
    private static func strings(_ claims: [String: JSONValue], _ name: String) throws -> [String] {
        guard let value = claims[name], value != .null else { return [] }
        guard let elements = value.arrayValue else {
            throw VerityKitError.mapping("The session token's \(name) claim is not an array.")
        }
        return try elements.map { element in
            guard let string = element.stringValue else {
                throw VerityKitError.mapping("The session token's \(name) claim holds something other than strings.")
            }
            return string
        }
    }
}

extension Session: CustomStringConvertible, CustomDebugStringConvertible {
    /// The session without its tokens, safe to log: ids, roles, `amr`, `acr` and expiry.
    public var description: String {
        let expiry = sessionExpiresAt.formatted(.iso8601)
        return
            "Session(\(sessionId), user: \(user.id), roles: \(roles), amr: \(amr), acr: \(acr ?? "none"), expires: \(expiry))"
    }

    /// The same as ``description``: no tokens.
    public var debugDescription: String { description }
}
