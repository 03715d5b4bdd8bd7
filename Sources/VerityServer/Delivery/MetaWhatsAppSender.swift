import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// Sends WhatsApp codes through Meta's WhatsApp Cloud API with an authentication template.
///
/// Each message is one `POST {baseURL}/{apiVersion}/{phoneNumberID}/messages` with `Authorization: Bearer <token>`
/// and the JSON of a template message whose body parameter and copy-code (URL) button parameter are both the code:
///
/// ```
/// {"messaging_product":"whatsapp","recipient_type":"individual","to":"14155550100","type":"template",
///  "template":{"name":"verity_code","language":{"code":"en_US"},"components":[
///   {"type":"body","parameters":[{"type":"text","text":"123456"}]},
///   {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"123456"}]}]}}
/// ```
///
/// A 2xx answer is success. Meta answers most refusals with 400 and an `error.code`; throttling and temporary outages
/// (codes 1, 2, 4, 80007, 130429, 131000, 131016, 131048, 131056, 133004), 429 and 5xx are transient. Anything else
/// is permanent with the reason `meta <status> <code>`: `meta 400 131026` is a number that has no WhatsApp (or cannot
/// receive the message), and `meta 401 190` an expired token. Meta has no idempotency key, so a retry after a lost
/// response may send a second message.
public struct MetaWhatsAppSender: SubmittingMessageSender {
    let configuration: MetaWhatsAppConfiguration
    let provider: ProviderClient

    /// Error codes that say "later", not "never".
    static let transientCodes: Set<Int> = [1, 2, 4, 80007, 130429, 131000, 131016, 131048, 131056, 133004]

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The phone number, token, template and endpoint.
    ///   - provider: The client and the logger (never given the token, the code or the full number).
    public init(configuration: MetaWhatsAppConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
    }

    /// Sends one WhatsApp message and returns Meta's id for it (`messages[0].id`, a `wamid.…`), which its
    /// delivery-status webhooks name; nil when the answer had none.
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        guard message.channel == .whatsapp, let code = message.code else {
            throw DeliveryError(.permanent, "meta sends whatsapp codes only, not \(message.channel.rawValue)")
        }
        let body = try ProviderJSON.encode(
            payload(to: message.to, code: code, language: message.language), what: "meta payload")
        var request = HTTPClientRequest(url: messagesURL)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.accessToken)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))

        var logger = provider.logger
        logger[metadataKey: "message.id"] = "\(message.id)"
        let (response, answer) = try await provider.exchange(
            request, provider: "meta", timeout: configuration.timeout, logger: logger)
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let error = try? JSONDecoder().decode(ErrorEnvelope.self, from: Data(answer.readableBytesView)).error
            // Meta's `message` and `error_data.details` may quote the number: only the codes are logged.
            logger.debug(
                "meta refused whatsapp",
                metadata: [
                    "http.status": "\(status)", "meta.code": "\(error?.code.map { "\($0)" } ?? "none")",
                    "meta.subcode": "\(error?.errorSubcode.map { "\($0)" } ?? "none")",
                    "meta.fbtrace_id": "\(error?.fbtraceId ?? "none")",
                ])
            let reason = ["meta", "\(status)", error?.code.map { "\($0)" }].compactMap { $0 }.joined(separator: " ")
            throw DeliveryError(Self.kind(ofStatus: status, code: error?.code), reason)
        }
        let accepted = try? JSONDecoder().decode(Accepted.self, from: Data(answer.readableBytesView))
        let id = accepted?.messages?.first?.id
        logger.debug("meta accepted whatsapp", metadata: ["meta.message_id": "\(id ?? "unknown")"])
        return id
    }

    /// `{baseURL}/{apiVersion}/{phoneNumberID}/messages`.
    var messagesURL: String {
        let base = ProviderHTTP.trimmed(configuration.baseURL)
        return "\(base)/\(configuration.apiVersion)/\(configuration.phoneNumberID)/messages"
    }

    /// Error codes Meta documents as temporary, 429 and 5xx are worth retrying; other 4xx are not.
    static func kind(ofStatus status: Int, code: Int?) -> DeliveryError.Kind {
        if let code, transientCodes.contains(code) { return .transient }
        switch status {
        case 429, 500..<600: return .transient
        case 400..<500: return .permanent
        default: return .transient
        }
    }

    /// The template message for `to` (its E.164 digits, as Meta writes numbers) in the template language of
    /// `language`.
    func payload(to: String, code: String, language: String) -> TemplateMessage {
        let text = [Parameter(type: "text", text: code)]
        return TemplateMessage(
            messagingProduct: "whatsapp", recipientType: "individual",
            to: to.hasPrefix("+") ? String(to.dropFirst()) : to, type: "template",
            template: Template(
                name: configuration.templateName,
                language: Language(code: configuration.templateLanguages[language] ?? language),
                components: [
                    Component(type: "body", subType: nil, index: nil, parameters: text),
                    Component(type: "button", subType: "url", index: "0", parameters: text),
                ]))
    }

    struct TemplateMessage: Encodable {
        var messagingProduct: String
        var recipientType: String
        var to: String
        var type: String
        var template: Template

        enum CodingKeys: String, CodingKey {
            case to, type, template
            case messagingProduct = "messaging_product"
            case recipientType = "recipient_type"
        }
    }

    struct Template: Encodable {
        var name: String
        var language: Language
        var components: [Component]
    }

    struct Language: Encodable {
        var code: String
    }

    struct Component: Encodable {
        var type: String
        var subType: String?
        var index: String?
        var parameters: [Parameter]

        enum CodingKeys: String, CodingKey {
            case type, index, parameters
            case subType = "sub_type"
        }
    }

    struct Parameter: Encodable {
        var type: String
        var text: String
    }

    /// `{"messaging_product":"whatsapp","contacts":[…],"messages":[{"id":"wamid.…"}]}`.
    private struct Accepted: Decodable {
        var messages: [Sent]?

        struct Sent: Decodable {
            var id: String?
        }
    }

    /// Graph API errors: `{"error":{"message":"…","type":"OAuthException","code":131026,"error_subcode":…,
    /// "error_data":{…},"fbtrace_id":"…"}}`.
    private struct ErrorEnvelope: Decodable {
        var error: GraphError

        struct GraphError: Decodable {
            var code: Int?
            var errorSubcode: Int?
            var fbtraceId: String?

            enum CodingKeys: String, CodingKey {
                case code
                case errorSubcode = "error_subcode"
                case fbtraceId = "fbtrace_id"
            }
        }
    }
}
