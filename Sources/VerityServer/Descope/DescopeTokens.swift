import Foundation
import HTTPTypes
import Hummingbird
import Logging
import VerityCore

/// A JWTResponse and the `Set-Cookie` headers of a project that delivers tokens as cookies.
struct DescopeTokens: ResponseGenerator {
    var body: [String: JSONValue]
    var cookies: [String]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try ExactKeysJSON(body).response(from: request, context: context)
        for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return response
    }

    /// `HttpOnly` (page scripts never read the tokens), `SameSite=Strict` (a cross-site request never carries them,
    /// so the refresh and logout calls that accept `DSR` cannot be forged from another site; python-sdk's own
    /// cookie helper uses Strict too), `Secure` when the server is reached over HTTPS.
    static func cookie(_ name: String, _ value: String, until expiry: Date, now: Date, secure: Bool) -> String {
        HTTPCookie.setCookie(name, value, path: "/", maxAge: max(0, Int(expiry.timeIntervalSince(now))), secure: secure)
    }
}
