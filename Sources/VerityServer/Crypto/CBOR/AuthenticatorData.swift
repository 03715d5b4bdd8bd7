import Foundation

/// Authenticator data (WebAuthn §6.1): what the authenticator signs along with the client data hash.
struct AuthenticatorData: Sendable {
    /// The fixed part: rpIdHash, flags and counter.
    static let fixedLength = 37
    /// WebAuthn's cap on credential ids.
    static let maximumCredentialIDLength = 1023

    /// SHA-256 of the relying-party id the authenticator scoped the credential to.
    let rpIDHash: Data
    /// UP, UV, BE, BS, AT and ED.
    let flags: AuthenticatorFlags
    /// The signature counter; zero when the authenticator keeps none (synced passkeys).
    let signCount: UInt32
    /// Present when the AT flag is set (registrations).
    let attestedCredential: AttestedCredentialData?
    /// The extension outputs map, present when the ED flag is set.
    let extensions: CBORValue?
    /// The bytes as received; signatures cover these, never a re-encoding.
    let raw: Data

    /// Parses `bytes`, which must hold exactly what the flags announce.
    init(_ bytes: some DataProtocol, decoder: CBORDecoder = CBORDecoder()) throws(AuthenticatorDataError) {
        let raw = Data(bytes)
        let input = [UInt8](raw)
        guard input.count >= Self.fixedLength else { throw .truncated }
        self.raw = raw
        rpIDHash = Data(input[0..<32])
        flags = AuthenticatorFlags(rawValue: input[32])
        signCount = input[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = Self.fixedLength

        if flags.contains(.attestedCredentialData) {
            guard input.count - offset >= 18 else { throw .truncated }
            let aaguid = Data(input[offset..<offset + 16])
            let idLength = Int(input[offset + 16]) << 8 | Int(input[offset + 17])
            offset += 18
            guard idLength <= Self.maximumCredentialIDLength else { throw .credentialIDTooLong }
            guard input.count - offset >= idLength else { throw .truncated }
            let credentialID = Data(input[offset..<offset + idLength])
            offset += idLength
            let key: (value: CBORValue, length: Int)
            do { key = try decoder.decodePrefix(input[offset...]) } catch { throw .invalidPublicKey(.malformed(error)) }
            let publicKey: COSEPublicKey
            do { publicKey = try COSEPublicKey(key.value) } catch { throw .invalidPublicKey(error) }
            attestedCredential = AttestedCredentialData(
                aaguid: aaguid, credentialID: credentialID, publicKey: publicKey,
                publicKeyCBOR: Data(input[offset..<offset + key.length]))
            offset += key.length
        } else {
            attestedCredential = nil
        }

        if flags.contains(.extensionData) {
            let parsed: (value: CBORValue, length: Int)
            do { parsed = try decoder.decodePrefix(input[offset...]) } catch { throw .malformedCBOR(error) }
            guard parsed.value.map != nil else { throw .malformedCBOR(.unsupported) }
            extensions = parsed.value
            offset += parsed.length
        } else {
            extensions = nil
        }
        guard offset == input.count else { throw .trailingBytes }
    }
}
