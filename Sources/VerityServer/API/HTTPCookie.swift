import Hummingbird

/// The cookies of the faces that keep a session in one (the console's, the Descope face's `DS` and `DSR`): how a
/// request's cookie is read and how `Set-Cookie` is written, once.
enum HTTPCookie {
    /// The value of the cookie `name` in the request's `Cookie` headers; nil when there is none or it is empty.
    static func value(_ name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    let value = parts[1].trimmingCharacters(in: .whitespaces)
                    return value.isEmpty ? nil : value
                }
            }
        }
        return nil
    }

    /// A `Set-Cookie` value: `HttpOnly` (page scripts never read it), `SameSite=Strict` (a cross-site request never
    /// carries it), `Secure` when the server is reached over HTTPS (``isSecure(publicURL:)``), and `Max-Age` when
    /// given (0 removes the cookie; none makes it last as long as the browser session).
    static func setCookie(_ name: String, _ value: String, path: String, maxAge: Int?, secure: Bool) -> String {
        let age = maxAge.map { "; Max-Age=\($0)" } ?? ""
        return "\(name)=\(value); Path=\(path)\(age); HttpOnly\(secure ? "; Secure" : ""); SameSite=Strict"
    }

    /// Whether cookies are `Secure`: when the server's public URL is HTTPS, in any letter case.
    static func isSecure(publicURL: String) -> Bool {
        publicURL.lowercased().hasPrefix("https://")
    }
}
