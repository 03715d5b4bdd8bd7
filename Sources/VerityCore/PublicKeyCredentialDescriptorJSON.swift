/// `PublicKeyCredentialDescriptorJSON` (WebAuthn Level 3 §5.10.3): a credential named in options, to exclude at
/// registration or to allow at sign-in.
public struct PublicKeyCredentialDescriptorJSON: Codable, Sendable {
    /// `public-key`, the only credential type WebAuthn defines.
    public var type: String
    /// The credential id, base64url.
    public var id: String
    /// The transports the credential reported; absent when it reported none.
    public var transports: [String]?

    /// The public-key credential `id`, with the transports it reported.
    public init(id: some Sequence<UInt8>, transports: [String]) {
        type = "public-key"
        self.id = Base64URL.encode(id)
        self.transports = transports.isEmpty ? nil : transports
    }
}
