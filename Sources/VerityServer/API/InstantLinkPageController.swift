import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The page behind an instant link: `GET /p/{token}` asks the person to confirm (a link opened by a message
/// scanner confirms nothing), `POST /p/{token}` confirms. Plain HTML, no JavaScript, readable on a phone.
struct InstantLinkPageController {
    let possession: PossessionService
    let admin: AdminService

    func addRoutes(to router: Router<VerityRequestContext>) {
        router.get("p/:token", use: show)
        router.post("p/:token", use: confirm)
    }

    @Sendable func show(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let token = try context.pathParameter("token")
        guard let (flow, _) = try await possession.linkTarget(token) else {
            return Self.page(.invalid, language: HostedPageText.language(of: request), status: .notFound)
        }
        let name = try await admin.findProject(id: flow.projectId)?.name ?? ""
        return Self.page(.confirm(project: name, token: token), language: flow.locale)
    }

    @Sendable func confirm(_ request: Request, context: VerityRequestContext) async throws -> Response {
        guard let flow = try await possession.confirmLink(try context.pathParameter("token")) else {
            return Self.page(.invalid, language: HostedPageText.language(of: request), status: .notFound)
        }
        let name = try await admin.findProject(id: flow.projectId)?.name ?? ""
        return Self.page(.done(project: name, next: flow.finalTargetURL), language: flow.locale)
    }

    enum Content {
        case confirm(project: String, token: String)
        case done(project: String, next: String?)
        case invalid
    }

    static func page(_ content: Content, language: String, status: HTTPResponse.Status = .ok) -> Response {
        let text = HostedPageText.Lines(language)
        let body: String
        var title = text[.phoneTitle]
        switch content {
        case .confirm(let project, let token):
            body = """
                <p>\(escape(text[.phoneConfirm].replacingOccurrences(of: "{project}", with: project)))</p>
                <form method="post" action="/p/\(escape(token))"><button type="submit">\(escape(text[.phoneButton]))</button></form>
                """
        case .done(let project, let next):
            let link =
                next.map { #"<p><a class="button" href="\#(escape($0))">\#(escape(text[.continue]))</a></p>"# } ?? ""
            title = text[.phoneDoneTitle]
            body = "<p>\(escape(text[.phoneDone].replacingOccurrences(of: "{project}", with: project)))</p>\(link)"
        case .invalid:
            body = "<p>\(escape(text[.invalid]))</p>"
        }
        let html = """
            <!doctype html>
            <html lang="\(text.language)"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(escape(title))</title>
            <style>
            body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:2rem 1.25rem;max-width:28rem;margin:auto;color:#111}
            h1{font-size:1.4rem}p{font-size:1.05rem;line-height:1.5}
            button,.button{font:inherit;display:block;box-sizing:border-box;width:100%;padding:.9rem;font-size:1.05rem;border:0;
            border-radius:.5rem;background:#1d4ed8;color:#fff;text-align:center;text-decoration:none}
            </style></head>
            <body><main><h1>\(escape(title))</h1>\(body)</main></body></html>
            """
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
            // No other site may frame the page and trick a click on its button (clickjacking); X-Frame-Options is
            // for browsers that predate frame-ancestors.
            .contentSecurityPolicy:
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ]
        if let frameOptions = HTTPField.Name("X-Frame-Options") { headers[frameOptions] = "DENY" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private static func escape(_ text: String) -> String { text.markupEscaped }
}
