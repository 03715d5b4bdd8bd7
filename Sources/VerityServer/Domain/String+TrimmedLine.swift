import Foundation

extension String {
    /// The text without the white space around it, if that is one line of `lengths` Unicode scalars (as the OpenAPI
    /// document's `maxLength` counts); nil otherwise. The rule of a name shown in a list: a project's, an API key's, a
    /// factor's, a passkey's.
    func trimmedLine(of lengths: ClosedRange<Int>) -> String? {
        let trimmed = trimmingCharacters(in: .whitespacesAndNewlines)
        guard lengths.contains(trimmed.unicodeScalars.count), !trimmed.contains(where: \.isNewline) else { return nil }
        return trimmed
    }
}
