import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The hosted passkey page: `POST /v1/passkey-links` and `GET /v1/passkey-links/{id}` for the backend (API key), and
/// the page on Verity's own origin, `GET /passkeys/{token}`, whose one script (`/passkey-page.js`, the console's
/// passkey script) runs the ceremony against `POST /passkeys/{token}/options` and `POST /passkeys/{token}`.
struct PasskeyLinkController {
    let links: PasskeyLinkService
    let admin: AdminService

    /// `POST /v1/passkey-links`.
    struct CreateRequest: Decodable {
        var ceremony: PasskeyLink.Ceremony
        var userId: String?
    }

    /// A link as the backend sees it.
    struct LinkResponse: ResponseEncodable {
        var id: String
        var ceremony: PasskeyLink.Ceremony
        var userId: String?
        var status: PasskeyLink.Status
        /// The page's URL, only when the link is made (it holds the secret).
        var url: String?
        var passkeyId: String?
        var createdAt: Date
        var expiresAt: Date
        var completedAt: Date?
        /// A sign-in's session, the first time the completed link is read.
        var session: AuthResponse?

        init(_ link: PasskeyLink, url: String? = nil, session: AuthResponse? = nil) {
            id = link.id
            ceremony = link.ceremony
            userId = link.userId
            status = link.status
            self.url = url
            passkeyId = link.passkeyId
            createdAt = link.createdAt
            expiresAt = link.expiresAt
            completedAt = link.completedAt
            self.session = session
        }
    }

    func addRoutes(backend: RouterGroup<VerityRequestContext>, router: Router<VerityRequestContext>) {
        backend.post("passkey-links", use: create)
        backend.get("passkey-links/:linkId", use: read)
        router.get("passkey-page.js") { _, _ in ConsolePasskeyScript.response() }
        router.get("passkeys/:token", use: show)
        router.post("passkeys/:token/options", use: options)
        router.post("passkeys/:token", use: answer)
    }

    @Sendable func create(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<LinkResponse>
    {
        let body = try await request.decodeJSON(CreateRequest.self, context: context)
        let (link, url) = try await links.create(body.ceremony, userId: body.userId, in: try context.requireProject())
        return EditedResponse(status: .created, response: LinkResponse(link, url: url))
    }

    @Sendable func read(_ request: Request, context: VerityRequestContext) async throws -> LinkResponse {
        let (link, session) = try await links.result(
            id: try context.pathParameter("linkId"), in: try context.requireProject())
        return LinkResponse(link, session: session)
    }

    // MARK: - The page

    /// The page, in the language the browser asks for first (`Accept-Language`) when it is one the page speaks.
    @Sendable func show(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let token = try context.pathParameter("token")
        let text = HostedPageText.Lines(HostedPageText.language(of: request))
        let language = text.language
        let invalid = "<p>\(text[.invalid].markupEscaped)</p>"
        guard let link = try await links.link(token: token),
            let project = try await admin.findProject(id: link.projectId)
        else { return Self.page(text[.passkeyInvalidTitle], invalid, language: language, status: .notFound) }
        let named = { (name: HostedPageText.Line) in
            text[name].replacingOccurrences(of: "{project}", with: project.name).markupEscaped
        }
        switch link.status(at: links.clock.now()) {
        case .completed:
            return Self.page(text[.passkeyDoneTitle], "<p>\(named(.passkeyDone))</p>", language: language)
        case .expired, .answering:
            return Self.page(text[.passkeyInvalidTitle], invalid, language: language, status: .notFound)
        case .pending:
            let registering = link.ceremony == .registration
            let path = "/passkeys/\(token.markupEscaped)"
            let title = text[registering ? .passkeyRegisterTitle : .passkeySignInTitle]
            return Self.page(
                title,
                """
                <p>\(named(registering ? .passkeyRegisterLead : .passkeySignInLead))</p>
                <form method="post" action="\(path)" data-passkey="\(registering ? "register" : "sign-in")" \
                data-options="\(path)/options"\(text.scriptAttributes)>
                <p><button type="submit" disabled>\(title.markupEscaped)</button></p>
                <p class="error" role="alert" data-passkey-status hidden></p>
                </form>
                """, language: language, script: true)
        }
    }

    @Sendable func options(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let token = try context.pathParameter("token")
        _ = try await request.collectBody()
        return try await PasskeyCeremonyJSON.respond { () async throws -> AnyOptions in
            let project = try await project(of: token)
            switch try await links.options(token: token, origin: request.headers[.origin], project: project) {
            case .creation(let options): return .creation(PublicKeyCredentialCreationOptionsJSON(options))
            case .request(let options): return .request(PublicKeyCredentialRequestOptionsJSON(options))
            }
        }
    }

    @Sendable func answer(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let token = try context.pathParameter("token")
        let form = try await ConsoleForm.body(of: request)
        return try await PasskeyCeremonyJSON.respond {
            let project = try await project(of: token)
            let credential = try PasskeyCeremonyJSON.credential(in: form)
            let answer: PasskeyLinkService.Answer =
                credential.response.attestationObject != nil
                ? .registration(try credential.registrationAnswer()) : .assertion(try credential.assertionAnswer())
            try await links.answer(token: token, answer, project: project)
            return PasskeyCeremonyJSON.Done(location: "/passkeys/\(token)")
        }
    }

    /// Either ceremony's options, encoded as the one it is.
    enum AnyOptions: Encodable {
        case creation(PublicKeyCredentialCreationOptionsJSON)
        case request(PublicKeyCredentialRequestOptionsJSON)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .creation(let options): try options.encode(to: encoder)
            case .request(let options): try options.encode(to: encoder)
            }
        }
    }

    private func project(of token: String) async throws -> Project {
        guard let link = try await links.link(token: token),
            let project = try await admin.findProject(id: link.projectId)
        else { throw VerityError(.challengeExpired, "This passkey link has expired or was already used.") }
        return project
    }

    /// The page in `language`: plain HTML, readable on a phone; with `script`, the passkey script from this origin.
    static func page(
        _ title: String, _ body: String, language: String, status: HTTPResponse.Status = .ok, script: Bool = false
    ) -> Response {
        let html = """
            <!doctype html>
            <html lang="\(language)"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(title.markupEscaped)</title>\(script ? #"<script src="/passkey-page.js" defer></script>"# : "")
            <style>
            body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:2rem 1.25rem;max-width:28rem;margin:auto;color:#111}
            h1{font-size:1.4rem}p{font-size:1.05rem;line-height:1.5}
            button{font:inherit;display:block;width:100%;padding:.9rem;border:0;border-radius:.5rem;background:#1d4ed8;color:#fff}
            button:disabled{background:#9ca3af}.error{background:#fef2f2;border:1px solid #ef4444;padding:.5rem .75rem}
            </style></head>
            <body><main><h1>\(title.markupEscaped)</h1>\(body)</main></body></html>
            """
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
            .contentSecurityPolicy:
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ]
        if let frameOptions = HTTPField.Name("X-Frame-Options") { headers[frameOptions] = "DENY" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
