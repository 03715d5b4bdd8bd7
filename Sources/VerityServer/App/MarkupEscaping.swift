extension String {
    /// The text with the five characters that mean something in HTML and XML (`&`, `<`, `>`, `"`, `'`) replaced by
    /// entities: safe as element content and as a quoted attribute value, in the console's and the hosted pages' HTML
    /// and in the TwiML of a call (a project name may hold `&` or `<`).
    var markupEscaped: String {
        var output = ""
        output.reserveCapacity(utf8.count)
        for character in self {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.append(character)
            }
        }
        return output
    }
}
