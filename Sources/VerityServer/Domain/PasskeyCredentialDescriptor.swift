import Foundation

/// A credential named in options (`excludeCredentials`, `allowCredentials`): its id and the transports it reported.
struct PasskeyCredentialDescriptor: Sendable, Equatable {
    var id: Data
    var transports: [String] = []
}
