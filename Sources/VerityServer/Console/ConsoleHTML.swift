import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// The console's HTML: every page in one layout, every value escaped, served with a strict content security policy.
/// Pages have no scripts, except the two passkey pages (signing in with a passkey, the account page), which load the
/// console's one script from its own origin; forms post back to the console and carry the session's CSRF token.
enum ConsoleHTML {
    /// `text` with the five characters that mean something in HTML replaced by entities.
    static func escape(_ text: String) -> String { text.markupEscaped }

    /// No script, no frame, nothing from another origin: the stylesheet and forms are the console's own.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        + "base-uri 'none'"

    /// The policy of a page that runs the console's passkey script: that one file, and requests to the console only.
    static let scriptPolicy = contentSecurityPolicy + "; script-src 'self'; connect-src 'self'"

    /// A whole page: the layout around `body` (already HTML), with the navigation when someone is signed in; with
    /// `script`, it loads `/console/console.js` (WebAuthn needs `navigator.credentials`).
    static func page(
        _ title: String, _ body: String, session: ConsoleSession? = nil, status: HTTPResponse.Status = .ok,
        headers extra: HTTPFields = [:], script: Bool = false
    ) -> Response {
        let navigation =
            session.map { session in
                """
                <header><nav aria-label="Console">
                <a href="/console">Dashboard</a>
                <a href="/console/projects">Projects</a>
                <a href="/console/verifications">Verifications</a>
                <a href="/console/messages">Messages</a>
                <a href="/console/audit">Audit trail</a>
                <a href="/console/account">Account</a>
                </nav>
                <form method="post" action="/console/sign-out" class="signout">\(csrfField(session))
                <span>\(escape(session.record.operatorName))</span> <button type="submit">Sign out</button></form>
                </header>
                """
            } ?? ""
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(escape(title)) · Verity console</title>
            <link rel="stylesheet" href="/console/console.css">\(script ? #"<script src="/console/console.js" defer></script>"# : "")
            </head><body>
            <a class="skip" href="#main">Skip to content</a>
            \(navigation)
            <main id="main" tabindex="-1"><h1>\(escape(title))</h1>
            \(body)
            </main></body></html>
            """
        var headers = extra
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = script ? scriptPolicy : contentSecurityPolicy
        if let frameOptions = HTTPField.Name("X-Frame-Options") { headers[frameOptions] = "DENY" }
        if let contentTypeOptions = HTTPField.Name("X-Content-Type-Options") { headers[contentTypeOptions] = "nosniff" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A `303 See Other` to `location` (after a form, so reloading does not post again).
    static func redirect(_ location: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// The hidden field every form carries.
    static func csrfField(_ session: ConsoleSession) -> String {
        #"<input type="hidden" name="csrf" value="\#(session.csrfToken)">"#
    }

    /// A form that posts to `action` with one button (and hidden `fields`).
    static func button(
        _ label: String, action: String, session: ConsoleSession, fields: [String: String] = [:],
        danger: Bool = false
    ) -> String {
        let hidden = fields.sorted { $0.key < $1.key }.map {
            #"<input type="hidden" name="\#(escape($0.key))" value="\#(escape($0.value))">"#
        }.joined()
        return """
            <form method="post" action="\(escape(action))" class="inline">\(csrfField(session))\(hidden)\
            <button type="submit"\(danger ? #" class="danger""# : "")>\(escape(label))</button></form>
            """
    }

    /// A labelled text input.
    static func field(
        _ label: String, name: String, value: String = "", type: String = "text", required: Bool = false,
        hint: String? = nil, extra: String = "", form: String = ""
    ) -> String {
        // Ids are unique on the page: a field of the same name in another form gets that form's prefix.
        let id = "f-\(form)\(name)"
        let (described, hintHTML) = Self.hint(hint, of: id)
        return """
            <p><label for="\(id)">\(escape(label))</label>\
            <input id="\(id)" name="\(escape(name))" type="\(type)" value="\(escape(value))"\
            \(required ? " required" : "")\(described) \(extra)>\(hintHTML)</p>
            """
    }

    /// A labelled choice of `options` (each its own value and text), `selected` chosen.
    static func select(_ label: String, name: String, options: [String], selected: String, hint: String? = nil)
        -> String
    {
        let id = "f-\(name)"
        let (described, hintHTML) = Self.hint(hint, of: id)
        let choices = options.map { option in
            #"<option value="\#(escape(option))"\#(option == selected ? " selected" : "")>\#(escape(option))</option>"#
        }.joined()
        return """
            <p><label for="\(id)">\(escape(label))</label>\
            <select id="\(id)" name="\(escape(name))"\(described)>\(choices)</select>\(hintHTML)</p>
            """
    }

    /// A control's hint: the attribute that ties the control to it, and its element (both empty without a hint).
    private static func hint(_ hint: String?, of id: String) -> (attribute: String, element: String) {
        guard let hint else { return ("", "") }
        return (#" aria-describedby="\#(id)-hint""#, #"<small id="\#(id)-hint">\#(escape(hint))</small>"#)
    }

    /// A table with a caption; `rows` are already HTML.
    static func table(caption: String, headers: [String], rows: [[String]], empty: String = "Nothing yet.") -> String {
        guard !rows.isEmpty else { return "<p class=\"empty\">\(escape(empty))</p>" }
        let head = headers.map { "<th scope=\"col\">\(escape($0))</th>" }.joined()
        let body = rows.map { "<tr>" + $0.map { "<td>\($0)</td>" }.joined() + "</tr>" }.joined(separator: "\n")
        return """
            <div class="scroll"><table><caption>\(escape(caption))</caption>
            <thead><tr>\(head)</tr></thead><tbody>
            \(body)
            </tbody></table></div>
            """
    }

    /// A search form over a list (GET, so the page can be bookmarked), with optional extra controls.
    static func search(action: String, label: String, value: String?, extra: String = "") -> String {
        """
        <form method="get" action="\(escape(action))" class="search" role="search">
        <label for="q">\(escape(label))</label>
        <input id="q" name="q" type="search" value="\(escape(value ?? ""))">\(extra)
        <button type="submit">Search</button></form>
        """
    }

    /// A list's status filter: a labelled `status` select of `values`, with "any" first, `selected` chosen.
    static func statusSelect(_ values: [String], selected: String?) -> String {
        let options = ([""] + values).map { value -> String in
            let chosen = value == (selected ?? "") ? " selected" : ""
            return #"<option value="\#(escape(value))"\#(chosen)>\#(value.isEmpty ? "any" : escape(value))</option>"#
        }.joined()
        return #"<label for="status">Status</label><select id="status" name="status">\#(options)</select>"#
    }

    /// The link to the next page of a list, keeping its search.
    static func nextPage(_ base: String, cursor: String?, query: [String: String?]) -> String {
        guard let cursor else { return "" }
        var items = query.compactMapValues { $0 }.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }.map {
            "\($0.key)=\(PercentEncoding.encode($0.value))"
        }
        items.append("cursor=\(PercentEncoding.encode(cursor))")
        return #"<p><a rel="next" href="\#(escape(base + "?" + items.joined(separator: "&")))">Next page</a></p>"#
    }

    static func date(_ date: Date?) -> String {
        guard let date else { return "" }
        return "<time datetime=\"\(date.formatted(.iso8601))\">\(escape(dateFormat.format(date)))</time>"
    }

    private static let dateFormat = Date.VerbatimFormatStyle(
        format:
            "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
        timeZone: .gmt, calendar: Calendar(identifier: .gregorian))

    /// A destination as the logs show it: a phone number or an email address masked, a push factor's id, a webhook's
    /// host.
    static func masked(_ destination: String, channel: OutboxChannel) -> String {
        if let code = channel.codeChannel {
            return (try? Destination(destination, channel: code).masked) ?? "***"
        }
        switch channel {
        case .webhook, .twilioWebhook: return URL(string: destination)?.host.map { "https://\($0)/…" } ?? "***"
        default: return destination
        }
    }

    /// The stylesheet: readable, with a visible focus ring for keyboard users.
    static let stylesheet = """
        :root{color-scheme:light;--accent:#1d4ed8;--muted:#555}
        body{font-family:system-ui,-apple-system,sans-serif;margin:0;color:#111;background:#fafafa}
        header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;
        padding:.5rem 1rem;background:#111;color:#fff}
        header nav a{color:#fff;margin-right:1rem;text-decoration:none;font-weight:600}
        header nav a:hover{text-decoration:underline}
        main{padding:1rem 1.5rem;max-width:72rem}
        h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
        a{color:var(--accent)}
        a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,main:focus-visible{
        outline:3px solid #f59e0b;outline-offset:2px}
        .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;color:#000;padding:.5rem;z-index:9}
        table{border-collapse:collapse;width:100%;background:#fff}caption{text-align:left;font-weight:600;padding:.25rem 0}
        th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;font-size:.92rem;vertical-align:top}
        .scroll{overflow-x:auto}
        label{display:block;font-weight:600;margin-bottom:.15rem}
        input,select{font:inherit;padding:.35rem;border:1px solid #888;border-radius:.25rem;min-width:16rem}
        small{display:block;color:var(--muted)}
        button{font:inherit;padding:.4rem .9rem;border:0;border-radius:.3rem;background:var(--accent);color:#fff;cursor:pointer}
        button.danger{background:#b91c1c}
        form.inline{display:inline}form.signout{color:#fff}form.signout button{background:#374151}
        form.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:1rem 0}
        form.search label{margin:0}
        .secret{font-family:ui-monospace,monospace;background:#fef3c7;padding:.75rem;border:1px solid #f59e0b;
        word-break:break-all}
        .notice{background:#ecfdf5;border:1px solid #10b981;padding:.5rem .75rem}
        .error{background:#fef2f2;border:1px solid #ef4444;padding:.5rem .75rem}
        .cards{display:flex;flex-wrap:wrap;gap:1rem}.card{background:#fff;border:1px solid #ddd;padding:.75rem 1rem;min-width:10rem}
        .card strong{display:block;font-size:1.6rem}
        svg text{font-family:system-ui,sans-serif;font-size:11px}
        """
}
