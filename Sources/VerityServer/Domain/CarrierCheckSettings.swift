import Foundation

/// A project's carrier check: the aggregator or operator that speaks CAMARA Number Verification for it, and how Verity
/// talks to it. Off until an operator turns it on with the endpoints and credentials the aggregator issued.
///
/// The client secret is never encoded (it is stored sealed, apart from the rest), so the settings may be shown and
/// logged as they are.
public struct CarrierCheckSettings: Sendable, Equatable, Codable {
    /// How the flow's number goes to `POST /verify`.
    public enum NumberFormat: String, Sendable, Codable, CaseIterable {
        /// `phoneNumber`: the E.164 number.
        case plain
        /// `hashedPhoneNumber`: the hex SHA-256 of the E.164 number, for operators that take it (less personal data
        /// leaves Verity).
        case hashed
    }

    /// Whether a mobile flow started with a number answers an authorization URL for the carrier check.
    public var enabled = false
    /// The OpenID Connect authorization endpoint the app opens over mobile data (front channel).
    public var authorizationURL = ""
    /// The token endpoint Verity exchanges the code at (back channel).
    public var tokenURL = ""
    /// The API root that holds `/verify`: everything before it, `…/number-verification/v1` included.
    public var apiURL = ""
    /// The client id the aggregator issued to this project.
    public var clientId = ""
    /// The client secret the aggregator issued; sealed at rest, never encoded.
    public var clientSecret: String? = nil
    /// The scopes to ask for: OpenID, the purpose (`dpv:…`) and Number Verification's own.
    public var scope = CarrierCheckSettings.defaultScope
    /// Whether `/verify` gets the number plain or hashed; hashed by default.
    public var numberFormat = NumberFormat.hashed
    /// How long the token exchange and `/verify` together may take, in seconds; past it the flow falls back to a code.
    public var timeout = 5

    /// The scope asked for unless the aggregator wants another: OpenID, fraud prevention as the purpose, and
    /// Number Verification's `verify`.
    public static let defaultScope = "openid dpv:FraudPreventionAndDetection number-verification:verify"
    /// The timeouts a project may set, in seconds.
    public static let timeoutRange = 1...30

    /// A carrier check that is off.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case enabled, authorizationURL, tokenURL, apiURL, clientId, scope, numberFormat, timeout
    }

    /// The endpoints, in the order an operator is told about them.
    var urls: [(name: String, url: String)] {
        [("authorization URL", authorizationURL), ("token URL", tokenURL), ("API URL", apiURL)]
    }

    /// Checks a check that is on: every endpoint an absolute http(s) URL, a client id and secret, a timeout in range.
    /// Where the endpoints may point (no private addresses) is ``OutboundAddressPolicy``'s, checked by the caller.
    func validated() throws(ConfigurationError) -> CarrierCheckSettings {
        guard Self.timeoutRange.contains(timeout) else {
            throw ConfigurationError("The carrier check timeout must be between 1 and 30 seconds.")
        }
        guard enabled else { return self }
        for (name, url) in urls {
            guard let components = URLComponents(string: url), ["https", "http"].contains(components.scheme ?? ""),
                components.host?.isEmpty == false, components.query == nil, components.fragment == nil
            else {
                throw ConfigurationError(
                    "The carrier check's \(name) must be an absolute http(s) URL without a query (it is '\(url)').")
            }
        }
        guard (1...256).contains(clientId.unicodeScalars.count), clientSecret?.isEmpty == false else {
            throw ConfigurationError("The carrier check needs the client id and client secret the aggregator issued.")
        }
        guard (1...512).contains(scope.unicodeScalars.count) else {
            throw ConfigurationError("The carrier check's scope must be 1 to 512 characters.")
        }
        return self
    }
}
