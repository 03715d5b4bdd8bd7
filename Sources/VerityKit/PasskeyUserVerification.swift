import Foundation

/// Whether the authenticator must verify the user (Face ID, Touch ID or the passcode), as the relying party asks.
public enum PasskeyUserVerification: String, Sendable, Equatable {
    /// The credential must verify the user.
    case required
    /// Verify the user where the authenticator can.
    case preferred
    /// Do not verify the user where that can be avoided.
    case discouraged

    /// Reads the options' value; an unknown one is `preferred`, as WebAuthn says.
    init(_ value: String?) {
        self = value.flatMap(Self.init(rawValue:)) ?? .preferred
    }
}
