import Foundation
import VerityCore

/// The claims of a verified Verity session token.
///
/// Only a ``SessionVerifier`` creates these, after checking the signature, issuer, audience and validity period.
public struct SessionClaims: Sendable, Equatable {
    /// The subject (`sub`): the user's id, `usr_…`.
    public let subject: String
    /// The issuer (`iss`): the server's public URL followed by `/v1/projects/` and the project id.
    public let issuer: String
    /// The audiences (`aud`); a single string audience becomes a one-element array.
    public let audience: [String]
    /// When the token expires (`exp`).
    public let expiresAt: Date
    /// When the token was issued (`iat`), if present.
    public let issuedAt: Date?
    /// The time before which the token must not be accepted (`nbf`), if present.
    public let notBefore: Date?
    /// How the user authenticated (`amr`), for example `["otp", "sms"]`; empty if absent.
    public let authenticationMethods: [String]
    /// The authentication context class (`acr`), `"mfa"` after a step-up; `nil` if absent.
    public let authenticationContextClass: String?
    /// The user's roles (`roles`); empty if absent.
    public let roles: [String]
    /// The user's permissions (`permissions`); empty if absent.
    public let permissions: [String]
    /// Every claim of the token as decoded JSON, including the ones above and the project's custom claims.
    public let rawClaims: [String: JSONValue]

    /// The claims that are not among the registered and Verity claims above (`sub`, `iss`, `aud`, `exp`, `iat`,
    /// `nbf`, `jti`, `amr`, `acr`, `roles`, `permissions`): the project's and the user's custom claims.
    public var customClaims: [String: JSONValue] {
        rawClaims.filter { !SessionClaimNames.reserved.contains($0.key) }
    }

    /// Whether ``roles`` contains `role`.
    ///
    /// - Parameter role: The role name.
    public func hasRole(_ role: String) -> Bool {
        roles.contains(role)
    }

    /// Whether ``permissions`` contains `permission`.
    ///
    /// - Parameter permission: The permission name.
    public func hasPermission(_ permission: String) -> Bool {
        permissions.contains(permission)
    }

    /// Reads the typed claims from `raw`, whose `iss` and `aud` the caller has already checked.
    init(raw: [String: JSONValue], issuer: String, audience: [String]) throws(SessionTokenError) {
        guard let subject = raw["sub"]?.stringValue else { throw .malformed }
        guard let expiry = raw["exp"]?.doubleValue else { throw .malformed }
        self.subject = subject
        self.issuer = issuer
        self.audience = audience
        self.expiresAt = Date(timeIntervalSince1970: expiry)
        self.issuedAt = try Self.optionalDate(raw["iat"])
        self.notBefore = try Self.optionalDate(raw["nbf"])
        self.authenticationMethods = try Self.strings(raw["amr"])
        if let acr = raw["acr"] {
            guard let value = acr.stringValue else { throw .malformed }
            self.authenticationContextClass = value
        } else {
            self.authenticationContextClass = nil
        }
        self.roles = try Self.strings(raw["roles"])
        self.permissions = try Self.strings(raw["permissions"])
        self.rawClaims = raw
    }

    private static func optionalDate(_ value: JSONValue?) throws(SessionTokenError) -> Date? {
        guard let value else { return nil }
        guard let seconds = value.doubleValue else { throw .malformed }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func strings(_ value: JSONValue?) throws(SessionTokenError) -> [String] {
        guard let value else { return [] }
        guard let elements = value.arrayValue else { throw .malformed }
        var strings: [String] = []
        for element in elements {
            guard let string = element.stringValue else { throw .malformed }
            strings.append(string)
        }
        return strings
    }
}
