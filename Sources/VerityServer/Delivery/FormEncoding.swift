import VerityCore

/// `application/x-www-form-urlencoded` bodies, as Twilio's API and Google's OAuth token endpoint take them.
enum FormEncoding {
    /// Encodes fields as `application/x-www-form-urlencoded` (the WHATWG URL standard's serializer): UTF-8, then every
    /// byte except `A–Z a–z 0–9 * - . _` percent-encoded, with a space as `+`. So `+14155550100` becomes
    /// `%2B14155550100`.
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    static func encode(_ string: String) -> String {
        PercentEncoding.encode(string, keeping: "*-._", spaceAsPlus: true)
    }
}
