/// A string enum of the wire models. A value outside it fails to decode with an error that names the values it takes,
/// so a refused request can say what it should have sent (`DecodingError.Context.wireEnumRefusal`).
public protocol WireEnum: CaseIterable, Codable, RawRepresentable where RawValue == String {}

extension WireEnum {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let value = Self(rawValue: try container.decode(String.self)) else {
            let names = Self.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: DecodingError.Context.refusalPrefix + names)
        }
        self = value
    }
}

extension DecodingError.Context {
    fileprivate static let refusalPrefix = "must be one of "

    /// "must be one of `sms`, `email`, `voice`, `whatsapp`" when a ``WireEnum`` refused the value: the end of the
    /// sentence that tells the caller what to send.
    public var wireEnumRefusal: String? {
        debugDescription.hasPrefix(Self.refusalPrefix) ? debugDescription : nil
    }
}
