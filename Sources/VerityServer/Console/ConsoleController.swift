import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The console's front door: signing in with a one-time link (and a TOTP code when the operator has one), signing
/// out, the session cookie and CSRF check every other console page goes through, the stylesheet and the audit trail.
struct ConsoleController: Sendable {
    let operators: OperatorService
    /// Whether the session cookie is marked `Secure` (the public URL is HTTPS: behind TLS or a TLS proxy).
    let secureCookies: Bool

    static let cookieName = "verity_console"

    typealias Handler = @Sendable (Request, VerityRequestContext) async throws -> Response

    func addRoutes(to console: RouterGroup<VerityRequestContext>) {
        console.get("console.css") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleHTML.stylesheet)))
        }
        console.get("sign-in", use: showSignIn)
        console.post("sign-in", use: signIn)
        console.post(
            "sign-out",
            use: action { _, session, _ in
                try await operators.signOut(session)
                return ConsoleHTML.page(
                    "Signed out", "<p>You are signed out. Ask for a new sign-in link to come back.</p>",
                    headers: [.setCookie: cookie(value: "", maxAge: 0)])
            })
        console.get(
            "audit",
            use: page { request, session in
                let query = ConsoleForm.query(of: request)
                let trail = try await operators.auditTrail(search: query["q"], cursor: query["cursor"])
                let rows = trail.items.map { entry in
                    [
                        ConsoleHTML.date(entry.createdAt),
                        ConsoleHTML.escape(entry.operatorName ?? "") + " <small>\(entry.operatorId)</small>",
                        "<code>\(ConsoleHTML.escape(entry.action))</code>", ConsoleHTML.escape(entry.target),
                    ]
                }
                return ConsoleHTML.page(
                    "Audit trail",
                    ConsoleHTML.search(
                        action: "/console/audit", label: "Action or target starts with", value: query["q"])
                        + ConsoleHTML.table(
                            caption: "What operators did, newest first",
                            headers: ["When (UTC)", "Operator", "Action", "Target"],
                            rows: rows)
                        + ConsoleHTML.nextPage("/console/audit", cursor: trail.nextCursor, query: ["q": query["q"]]),
                    session: session)
            })
    }

    // MARK: - Signing in and out

    @Sendable func showSignIn(_ request: Request, context: VerityRequestContext) async throws -> Response {
        guard let token = ConsoleForm.query(of: request)["token"] else {
            return ConsoleHTML.page(
                "Sign in",
                """
                <p>Sign in with a one-time link. On the server, run</p>
                <pre><code>verity admin console-login YOUR-NAME</code></pre>
                <p>and open the link it prints within \(Int(OperatorService.linkLifetime / 60)) minutes.</p>
                """)
        }
        guard let consoleOperator = try await operators.linkOperator(token) else { return Self.invalidLink() }
        if consoleOperator.hasPasskeys {
            return Self.passkeySignIn(token: token, consoleOperator)
        }
        let totp =
            consoleOperator.hasTOTP
            ? ConsoleHTML.field(
                "Code from your authenticator app", name: "code", required: true,
                extra: #"inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}""#) : ""
        return ConsoleHTML.page(
            "Sign in",
            """
            <form method="post" action="/console/sign-in">
            <input type="hidden" name="token" value="\(ConsoleHTML.escape(token))">
            \(totp)
            <p><button type="submit" autofocus>Sign in as \(ConsoleHTML.escape(consoleOperator.name))</button></p>
            </form>
            """)
    }

    /// The sign-in page of an operator with a passkey: the passkey, or (when they have TOTP too) a code.
    static func passkeySignIn(token: String, _ consoleOperator: ConsoleOperator) -> Response {
        let code = ConsoleHTML.field(
            "Code from your authenticator app", name: "code", required: true,
            extra: #"inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}""#)
        let totp =
            consoleOperator.hasTOTP
            ? """
            <h2>Or with a code</h2>
            <form method="post" action="/console/sign-in">
            <input type="hidden" name="token" value="\(ConsoleHTML.escape(token))">
            \(code)
            <p><button type="submit">Sign in with the code</button></p>
            </form>
            """ : ""
        return ConsoleHTML.page(
            "Sign in", ConsolePasskeysController.signInForm(token: token, operatorName: consoleOperator.name) + totp,
            script: true)
    }

    @Sendable func signIn(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let form = try await ConsoleForm.body(of: request)
        do {
            let (token, _) = try await operators.signIn(
                linkToken: form["token"] ?? "", totpCode: form["code"], clientAddress: context.clientAddress)
            return ConsoleHTML.redirect("/console", headers: [.setCookie: cookie(value: token, maxAge: nil)])
        } catch let refusal as OperatorService.SignInRefusal {
            return Self.refused(refusal)
        }
    }

    /// The sign-in page that says why a sign-in was refused; its alert carries the refusal's stable code in
    /// `data-code` (`invalid_session`, `wrong_code`, `rate_limited`, `wrong_factor`).
    static func refused(_ refusal: OperatorService.SignInRefusal) -> Response {
        switch refusal {
        case .invalidLink:
            return invalidLink()
        case .invalidCode(let codesLeft?) where codesLeft == 0:
            return alert(
                .wrongCode,
                "That code is not right, and this link has had its \(OperatorService.codesPerLink) codes: it is "
                    + "spent.</p><p>Ask for a new one with <code>verity admin console-login</code>.")
        case .invalidCode(let codesLeft):
            let more = codesLeft.map { " This link takes \($0) more \($0 == 1 ? "code" : "codes")." } ?? ""
            return alert(
                .wrongCode, "That code is not right.\(more) Open your sign-in link again and enter the current code.")
        case .passkeyRequired:
            return alert(
                .wrongFactor,
                "This operator signs in with a passkey.</p><p>Open your sign-in link again in a browser that offers "
                    + "passkeys and choose <em>Sign in with a passkey</em>.")
        case .lockedOut(let retryAfter):
            var response = alert(
                .rateLimited,
                "Too many wrong codes: sign-in is locked for this operator or from this address. The code was "
                    + "not checked; try again in \(retryAfter) seconds.",
                status: .tooManyRequests)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
    }

    static func invalidLink() -> Response {
        alert(
            .invalidSession,
            "This sign-in link has expired or was already used.</p>"
                + "<p>Ask for a new one with <code>verity admin console-login</code>.")
    }

    /// The sign-in page with an alert: `message` is markup (no user input in it).
    private static func alert(_ code: ErrorCode, _ message: String, status: HTTPResponse.Status = .unauthorized)
        -> Response
    {
        ConsoleHTML.page(
            "Sign in", #"<p class="error" role="alert" data-code="\#(code.rawValue)">\#(message)</p>"#, status: status)
    }

    /// The session cookie: only for the console's paths, never sent by another site's requests, never readable by
    /// scripts, and only over HTTPS when the server is reached over HTTPS.
    func cookie(value: String, maxAge: Int?) -> String {
        HTTPCookie.setCookie(Self.cookieName, value, path: "/console", maxAge: maxAge, secure: secureCookies)
    }

    // MARK: - What every other page goes through

    /// The signed-in session the request's cookie names, if any.
    func session(_ request: Request) async throws -> ConsoleSession? {
        guard let token = HTTPCookie.value(Self.cookieName, in: request) else { return nil }
        return try await operators.session(cookie: token)
    }

    /// A page for signed-in operators; anyone else is sent to the sign-in page.
    func page(_ body: @escaping @Sendable (Request, ConsoleSession) async throws -> Response) -> Handler {
        { request, _ in
            guard let session = try await session(request) else { return ConsoleHTML.redirect("/console/sign-in") }
            return try await body(request, session)
        }
    }

    /// A form's target: only for a signed-in operator, and only with the session's CSRF token; the form is read
    /// before anything is done.
    func action(_ body: @escaping @Sendable (Request, ConsoleSession, ConsoleForm) async throws -> Response) -> Handler
    {
        { request, _ in
            let form = try await ConsoleForm.body(of: request)
            guard let session = try await session(request) else {
                return ConsoleHTML.page(
                    "Signed out",
                    #"<p class="error" role="alert">You are signed out. <a href="/console/sign-in">Sign in</a> again.</p>"#,
                    status: .unauthorized)
            }
            guard operators.acceptsCSRF(form["csrf"], for: session) else {
                return ConsoleHTML.page(
                    "Form refused",
                    #"<p class="error" role="alert">This form was not sent from the console page (its CSRF token "#
                        + "is missing or wrong). Reload the page and try again.</p>",
                    session: session, status: .forbidden)
            }
            return try await body(request, session, form)
        }
    }
}
