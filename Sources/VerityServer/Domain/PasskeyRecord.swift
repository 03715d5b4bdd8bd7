import Foundation

/// A user's passkey as the relying party keeps it: the credential its assertions are checked against, and what the
/// user sees of it.
struct PasskeyRecord: Sendable, Equatable {
    /// The passkey's id (`pky_…`), which the user and the backend name it by; the credential id stays the
    /// authenticator's.
    var id: String
    var projectId: String
    var userId: String
    /// The credential id, its COSE key, its last counter and its BE flag.
    var credential: StoredPasskey
    /// Whether the credential was backed up (BS) at its last use.
    var backedUp: Bool
    /// The transports the client reported at registration.
    var transports: [String]
    /// The authenticator model (16 bytes; all zero when the authenticator does not say).
    var aaguid: Data
    /// The attestation statement format checked at registration.
    var attestationFormat: String
    /// The name the user gave it.
    var friendlyName: String
    var createdAt: Date
    var lastUsedAt: Date?
}

extension PasskeyRecord {
    /// A passkey that has just passed registration, named `friendlyName`, never used yet.
    init(
        id: String, projectId: String, userId: String, registered: RegisteredPasskey, friendlyName: String,
        createdAt: Date
    ) {
        self.init(
            id: id, projectId: projectId, userId: userId, credential: registered.credential,
            backedUp: registered.backedUp, transports: registered.transports, aaguid: registered.aaguid,
            attestationFormat: registered.attestationFormat, friendlyName: friendlyName, createdAt: createdAt,
            lastUsedAt: nil)
    }
}
