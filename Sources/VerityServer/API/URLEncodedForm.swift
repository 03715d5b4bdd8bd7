/// `application/x-www-form-urlencoded` text, as a form body or a query string carries it: the one parser behind every
/// face that reads forms (Twilio's parameters, the console's forms, Twilio's status callbacks, Firebase's refresh).
enum URLEncodedForm {
    /// The pairs of `name=value&…`, in order. Each pair splits at its first `=` (one without `=` has an empty value),
    /// `+` is a space and `%XX` a byte. A name or value whose percent-encoding is broken, or is not UTF-8, is nil, for
    /// the caller to refuse or pass over as its face does.
    static func pairs(_ text: Substring) -> [(name: String?, value: String?)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), decode(parts.count > 1 ? parts[1] : ""))
        }
    }

    /// Every pair, or nil when any of them is broken.
    static func validPairs(_ text: Substring) -> [(name: String, value: String)]? {
        var valid: [(name: String, value: String)] = []
        for (name, value) in pairs(text) {
            guard let name, let value else { return nil }
            valid.append((name, value))
        }
        return valid
    }

    private static func decode(_ part: Substring) -> String? {
        part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
