/// `application/x-www-form-urlencoded` bodies, as Twilio's API and Google's OAuth token endpoint take them.
enum FormEncoding {
    /// Encodes fields as `application/x-www-form-urlencoded` (the WHATWG URL standard's serializer): UTF-8, then every
    /// byte except `A–Z a–z 0–9 * - . _` percent-encoded, with a space as `+`. So `+14155550100` becomes
    /// `%2B14155550100`.
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    static func encode(_ string: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
