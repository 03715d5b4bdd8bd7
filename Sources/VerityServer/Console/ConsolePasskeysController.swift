import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// Operators' passkeys in the console: the account page (list, add, rename, delete), signing in with a passkey after
/// a one-time link, and the one script those two pages run (``ConsolePasskeyScript``). The ceremonies' JSON
/// endpoints answer `{code, message}` on a refusal, which the script shows with the code in `data-code`.
struct ConsolePasskeysController: Sendable {
    let console: ConsoleController
    let passkeys: OperatorPasskeyService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.get("console.js") { _, _ in ConsolePasskeyScript.response() }
        group.get("account", use: console.page(account))
        group.post(
            "account/passkeys/options",
            use: console.action { request, session, _ in
                try await PasskeyCeremonyJSON.respond {
                    _ = try passkeys.checkOrigin(request.headers[.origin])
                    return PublicKeyCredentialCreationOptionsJSON(
                        try await passkeys.registrationOptions(for: session.record))
                }
            })
        group.post(
            "account/passkeys",
            use: console.action { _, session, form in
                try await PasskeyCeremonyJSON.respond {
                    let answer = try PasskeyCeremonyJSON.credential(in: form).registrationAnswer()
                    _ = try await passkeys.register(answer, friendlyName: form["name"], for: session.record)
                    return PasskeyCeremonyJSON.Done(location: "/console/account")
                }
            })
        group.post(
            "account/passkeys/:passkey/rename",
            use: console.action { request, session, form in
                try await passkeys.rename(id: Self.passkeyId(request), to: form["name"] ?? "", for: session.record)
                return ConsoleHTML.redirect("/console/account")
            })
        group.post(
            "account/passkeys/:passkey/delete",
            use: console.action { request, session, _ in
                try await passkeys.delete(id: Self.passkeyId(request), for: session.record)
                return ConsoleHTML.redirect("/console/account")
            })
        group.post("sign-in/passkey/options", use: signInOptions)
        group.post("sign-in/passkey", use: signIn)
    }

    // MARK: - The account page

    @Sendable private func account(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let list = try await passkeys.passkeys(of: session.record)
        let rows = list.map { passkey in
            [
                ConsoleHTML.escape(passkey.friendlyName), ConsoleHTML.date(passkey.createdAt),
                ConsoleHTML.date(passkey.lastUsedAt),
                """
                <form method="post" action="/console/account/passkeys/\(passkey.id)/rename" class="inline">\
                \(ConsoleHTML.csrfField(session))\
                \(ConsoleHTML.field("New name", name: "name", value: passkey.friendlyName, required: true, form: passkey.id + "-"))\
                <button type="submit">Rename</button></form>
                """,
                ConsoleHTML.button(
                    "Delete \(passkey.friendlyName)", action: "/console/account/passkeys/\(passkey.id)/delete",
                    session: session, danger: true),
            ]
        }
        let body = """
            <p>Signed in as <strong>\(ConsoleHTML.escape(session.record.operatorName))</strong>.</p>
            <h2>Passkeys</h2>
            <p>Once you have a passkey, a sign-in link asks for it (or for your authenticator app's code, if you have \
            TOTP too); the link alone no longer signs you in.</p>
            \(ConsoleHTML.table(caption: "Your passkeys", headers: ["Name", "Added (UTC)", "Last used (UTC)", "", ""], rows: rows, empty: "You have no passkey yet."))
            <h2>Add a passkey</h2>
            <form method="post" action="/console/account/passkeys" data-passkey="register" \
            data-options="/console/account/passkeys/options">\(ConsoleHTML.csrfField(session))
            \(ConsoleHTML.field("Name", name: "name", value: "Passkey", required: true, hint: "To tell your passkeys apart, e.g. the device."))
            <p><button type="submit" id="add-passkey" disabled>Add a passkey</button></p>
            \(Self.statusLine)
            </form>
            """
        return ConsoleHTML.page("Account", body, session: session, script: true)
    }

    // MARK: - Signing in

    /// The part of the sign-in page that signs in with a passkey, for the link `token` of `operatorName`.
    static func signInForm(token: String, operatorName: String) -> String {
        """
        <form method="post" action="/console/sign-in/passkey" data-passkey="sign-in" \
        data-options="/console/sign-in/passkey/options">
        <input type="hidden" name="token" value="\(ConsoleHTML.escape(token))">
        <p><button type="submit" id="passkey-sign-in" disabled>Sign in as \(ConsoleHTML.escape(operatorName)) \
        with a passkey</button></p>
        \(statusLine)
        </form>
        """
    }

    /// Where the script says why a ceremony did not finish (the browser has no passkeys, the server refused, the
    /// user cancelled), with a stable code in `data-code`.
    private static let statusLine = #"<p class="error" role="alert" data-passkey-status hidden></p>"#

    @Sendable func signInOptions(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let form = try await ConsoleForm.body(of: request)
        return try await PasskeyCeremonyJSON.respond {
            _ = try passkeys.checkOrigin(request.headers[.origin])
            return PublicKeyCredentialRequestOptionsJSON(
                try await Self.wordingLinkRefusal { try await passkeys.signInOptions(linkToken: form["token"] ?? "") })
        }
    }

    @Sendable func signIn(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let form = try await ConsoleForm.body(of: request)
        var cookie: String?
        var response = try await PasskeyCeremonyJSON.respond {
            let answer = try PasskeyCeremonyJSON.credential(in: form).assertionAnswer()
            let (token, _) = try await Self.wordingLinkRefusal {
                try await passkeys.signIn(
                    linkToken: form["token"] ?? "", answer: answer, clientAddress: context.clientAddress)
            }
            cookie = console.cookie(value: token, maxAge: nil)
            return PasskeyCeremonyJSON.Done(location: "/console")
        }
        if let cookie { response.headers[.setCookie] = cookie }
        return response
    }

    /// `body`, with an unusable link's refusal as the error the JSON answers word (the passkey ceremonies count no
    /// codes, so no other refusal reaches here).
    private static func wordingLinkRefusal<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch is OperatorService.SignInRefusal {
            throw VerityError(.invalidSession, "This sign-in link has expired or was already used. Ask for a new one.")
        }
    }

    private static func passkeyId(_ request: Request) -> String {
        let segments = request.uri.path.split(separator: "/")
        return segments.count > 3 ? String(segments[3]) : ""
    }
}
