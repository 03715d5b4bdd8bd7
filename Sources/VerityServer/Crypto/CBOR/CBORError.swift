/// Why ``CBORDecoder`` refused its input. Every malformed, hostile or unsupported input ends in one of these; the
/// decoder never traps.
enum CBORError: Error, Sendable, Hashable {
    /// The input ended inside an item (a header, a length or the content it announced).
    case truncated
    /// Bytes follow the one item the input should hold.
    case trailingBytes
    /// The input is larger than the decoder's size cap.
    case tooLarge
    /// Arrays and maps nest deeper than the decoder's depth cap.
    case tooDeep
    /// An indefinite-length string, array or map (additional information 31), which WebAuthn never uses.
    case indefiniteLength
    /// Additional information 28 to 30, which RFC 8949 reserves.
    case reservedAdditionalInformation
    /// A map holds the same key twice.
    case duplicateMapKey
    /// A text string is not valid UTF-8.
    case invalidUTF8
    /// A float, a tag or a simple value other than false, true, null and undefined.
    case unsupported
}
