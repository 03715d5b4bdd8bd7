import Foundation

/// The JSON Verity sends to providers and gateways: slashes unescaped, keys sorted unless a provider's format says
/// otherwise.
enum ProviderJSON {
    /// `payload` encoded; a permanent ``DeliveryError`` (`<what> could not be encoded`) when it cannot be.
    static func encode(_ payload: some Encodable, sortedKeys: Bool = true, what: String) throws(DeliveryError)
        -> [UInt8]
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = sortedKeys ? [.sortedKeys, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(payload))
        } catch {
            throw DeliveryError(.permanent, "\(what) could not be encoded")
        }
    }
}
