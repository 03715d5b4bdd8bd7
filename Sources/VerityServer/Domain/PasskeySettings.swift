import Foundation
import SwiftASN1
import VerityCore
import X509

/// A project's WebAuthn relying-party settings: who the credentials are scoped to, which pages and apps may use
/// them, and what the project asks of authenticators.
public struct PasskeySettings: Sendable, Equatable, Codable {
    /// A WebAuthn requirement level (`discouraged`, `preferred`, `required`), for resident keys and user verification.
    public enum Requirement: String, Sendable, Codable, CaseIterable {
        case discouraged, preferred, required
    }

    /// Where the authenticator may live: on the device (`platform`) or roaming (`cross-platform`).
    public enum Attachment: String, Sendable, Codable, CaseIterable {
        case platform
        case crossPlatform = "cross-platform"
    }

    /// What the project asks to learn about the authenticator: nothing (`none`) or a verified `packed` attestation
    /// statement (`direct`).
    public enum Attestation: String, Sendable, Codable, CaseIterable {
        case none, direct
    }

    /// The relying-party id: a registrable domain the origins belong to (`example.com`).
    public var rpID: String
    /// The name authenticators show.
    public var rpName: String
    /// The origins a ceremony may come from: `https://` web origins, and `android:apk-key-hash:` origins for apps.
    public var origins: [String]
    /// The attachment asked for; nil lets the user choose.
    public var attachment: Attachment? = nil
    /// Whether the credential must be discoverable (sign-in without a login id needs one).
    public var residentKey: Requirement = .preferred
    /// Whether the authenticator must verify the user; `required` refuses an answer without the UV flag.
    public var userVerification: Requirement = .preferred
    /// The attestation asked for at registration.
    public var attestation: Attestation = .none
    /// The roots an `x5c` attestation must chain to, as PEM certificates (from the FIDO Metadata Service, or the
    /// authenticator vendors'); nil for none, which refuses every `x5c` statement when attestation is `direct`.
    public var attestationRoots: String? = nil
    /// How long a challenge may be answered, in seconds (30 s to 10 min).
    public var challengeLifetime: Int = 300
    /// The iOS and macOS apps that may use the credentials, as `TEAMID.bundle.id`: the `webcredentials` of
    /// `/.well-known/apple-app-site-association` on the relying-party id. Nil or empty: none.
    public var appleAppIDs: [String]? = nil
    /// The Android apps (package names) that may use the credentials: `/.well-known/assetlinks.json` on the
    /// relying-party id names them with the signing certificates of the `android:apk-key-hash:` origins.
    public var androidPackages: [String]? = nil

    /// The SHA-256 fingerprints of the Android signing certificates the `android:apk-key-hash:` origins name, in the
    /// form `assetlinks.json` takes (uppercase hex pairs joined by colons).
    public var androidCertificateFingerprints: [String] {
        origins.compactMap { origin in
            guard origin.hasPrefix(Self.androidOriginPrefix),
                let hash = Base64URL.decode(Self.base64URL(String(origin.dropFirst(Self.androidOriginPrefix.count))))
            else { return nil }
            return hash.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: ":")
        }
    }

    /// An Android origin's hash in base64url, however the app wrote it (Android writes base64 with `+` and `/`).
    private static func base64URL(_ hash: String) -> String {
        hash.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// At most this many attestation roots, of at most ``attestationRootsMaximumSize`` bytes of PEM.
    public static let attestationRootsMaximumCount = 64
    public static let attestationRootsMaximumSize = 256 * 1024

    /// The certificates of ``attestationRoots``; none when it is nil or does not parse (``validated()`` refuses
    /// that).
    var attestationRootCertificates: [Certificate] {
        (try? Self.certificates(pem: attestationRoots ?? "")) ?? []
    }

    /// The certificates of a PEM bundle; throws when one block is not a certificate.
    static func certificates(pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).map { try Certificate(pemDocument: $0) }
    }

    /// The allowed range of ``challengeLifetime``.
    public static let challengeLifetimeRange = 30...600

    /// Settings for the relying party `rpID`, named `rpName`, used from `origins`.
    public init(rpID: String, rpName: String, origins: [String]) {
        self.rpID = rpID
        self.rpName = rpName
        self.origins = origins
    }

    /// The prefix of an Android app's origin: the base64url SHA-256 of its signing certificate follows.
    public static let androidOriginPrefix = "android:apk-key-hash:"

    /// Checks the settings: a relying-party id that is a lowercase domain name, a name of 1 to 64 characters, at
    /// least one origin, each an `https` origin on the relying-party id or one of its subdomains (`http` only for
    /// `localhost`) or an Android app origin, and a challenge lifetime in range. Origins come back without
    /// duplicates, in the order given.
    public func validated() throws(ConfigurationError) -> PasskeySettings {
        let labels = rpID.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...253).contains(rpID.count), !labels.isEmpty,
            labels.allSatisfy({ label in
                (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                    && label.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
            })
        else {
            throw ConfigurationError(
                "The passkey relying-party id must be a lowercase domain name such as example.com.")
        }
        guard (1...64).contains(rpName.unicodeScalars.count) else {
            throw ConfigurationError("The passkey relying-party name must have 1 to 64 characters.")
        }
        var unique: [String] = []
        for origin in origins where !unique.contains(origin) {
            guard allowsAsOrigin(origin) else {
                throw ConfigurationError(
                    "'\(origin)' is not an https origin on \(rpID) (or a subdomain) nor an \(Self.androidOriginPrefix) origin."
                )
            }
            unique.append(origin)
        }
        guard !unique.isEmpty else { throw ConfigurationError("Passkeys need at least one allowed origin.") }
        guard Self.challengeLifetimeRange.contains(challengeLifetime) else {
            throw ConfigurationError("The passkey challenge lifetime must be between 30 and 600 seconds.")
        }
        for id in appleAppIDs ?? [] where !Self.isAppleAppID(id) {
            throw ConfigurationError("'\(id)' is not an Apple app id: a 10-character team id, a dot, a bundle id.")
        }
        for package in androidPackages ?? [] where !Self.isAndroidPackage(package) {
            throw ConfigurationError("'\(package)' is not an Android package name such as com.example.app.")
        }
        guard androidPackages?.isEmpty ?? true || !androidCertificateFingerprints.isEmpty else {
            throw ConfigurationError(
                "An Android app needs its \(Self.androidOriginPrefix) origin, which names its signing certificate.")
        }
        if let roots = attestationRoots {
            guard roots.utf8.count <= Self.attestationRootsMaximumSize,
                let certificates = try? Self.certificates(pem: roots),
                (1...Self.attestationRootsMaximumCount).contains(certificates.count)
            else {
                throw ConfigurationError(
                    "Passkey attestation roots must be 1 to \(Self.attestationRootsMaximumCount) PEM certificates.")
            }
        }
        var copy = self
        copy.origins = unique
        return copy
    }

    /// `TEAMID.bundle.id`: ten uppercase letters or digits, a dot, and a bundle id.
    private static func isAppleAppID(_ id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1)
        return id.count <= 255 && parts.count == 2 && parts[0].count == 10
            && parts[0].allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
            && parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                !label.isEmpty && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
    }

    /// At least two dot-separated segments, each a letter and then letters, digits or underscores.
    private static func isAndroidPackage(_ package: String) -> Bool {
        let segments = package.split(separator: ".", omittingEmptySubsequences: false)
        return package.count <= 255 && segments.count >= 2
            && segments.allSatisfy { segment in
                (segment.first?.isLetter ?? false)
                    && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            }
    }

    /// An origin is a scheme, a host and maybe a port, nothing else; WebAuthn lets a page on the relying-party id or a
    /// subdomain of it use its credentials.
    private func allowsAsOrigin(_ origin: String) -> Bool {
        if origin.hasPrefix(Self.androidOriginPrefix) {
            let hash = String(origin.dropFirst(Self.androidOriginPrefix.count))
            return Base64URL.decode(Self.base64URL(hash))?.count == 32
        }
        guard let components = URLComponents(string: origin), let host = components.host,
            components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil,
            components.password == nil,
            origin == "\(components.scheme ?? "")://\(host)\(components.port.map { ":\($0)" } ?? "")"
        else { return false }
        switch components.scheme {
        case "https": return host == rpID || host.hasSuffix("." + rpID)
        case "http": return host == "localhost" && rpID == "localhost"
        default: return false
        }
    }
}
