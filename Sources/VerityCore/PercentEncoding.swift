/// Percent-encoding (RFC 3986 §2.1) of UTF-8 text, for the URLs and form bodies Verity builds by hand: an
/// `otpauth://` URI, a Twilio form body, a link in the console. Shared by Verity's own modules, not part of the SDK.
package enum PercentEncoding {
    /// Encodes every UTF-8 byte of `text` as `%XX` (upper-case hexadecimal), except the ASCII letters and digits and
    /// the characters of `keeping`.
    ///
    /// - Parameters:
    ///   - keeping: ASCII punctuation left as it is: RFC 3986's unreserved `-._~` by default; a form body keeps
    ///     `*-._` (the WHATWG URL standard's serializer).
    ///   - spaceAsPlus: Writes a space as `+`, as `application/x-www-form-urlencoded` does.
    package static func encode(_ text: String, keeping: String = "-._~", spaceAsPlus: Bool = false) -> String {
        let kept = Set(keeping.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                output.append(byte)
            case _ where kept.contains(byte):
                output.append(byte)
            case UInt8(ascii: " ") where spaceAsPlus:
                output.append(UInt8(ascii: "+"))
            default:
                output.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let hex = Array("0123456789ABCDEF".utf8)
}
