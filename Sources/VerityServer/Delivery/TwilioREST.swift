import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// One create call to Twilio's REST API, shared by the SMS, WhatsApp and voice senders:
/// `POST {baseURL}/2010-04-01/Accounts/{AccountSid}/{Resource}.json`, form-encoded, with HTTP Basic auth.
///
/// A 2xx answer (Twilio answers 201 with the new resource) is success. 429 and 5xx answers, network errors and
/// timeouts are transient; any other 4xx is permanent, with the reason `twilio <status> <code>` (for example
/// `twilio 400 21211` for an invalid `To` number).
struct TwilioREST: Sendable {
    let configuration: TwilioConfiguration
    let provider: ProviderClient

    /// `{baseURL}/2010-04-01/Accounts/{AccountSid}/{resource}.json`.
    func url(_ resource: String) -> String {
        let base = ProviderHTTP.trimmed(configuration.baseURL)
        return "\(base)/2010-04-01/Accounts/\(configuration.accountSID)/\(resource).json"
    }

    /// Creates one `resource` (`Messages`, `Calls`) from `fields`; `what` names it in the logs (`sms`, `call`).
    /// Asks for status callbacks at ``TwilioConfiguration/statusCallbackURL`` when one is set. Returns the new
    /// resource's SID (`SM…`, `CA…`), which those callbacks name.
    @discardableResult
    func create(_ resource: String, fields: [(String, String)], messageID: String, what: String) async throws
        -> String?
    {
        var fields = fields
        if let callback = configuration.statusCallbackURL { fields.append(("StatusCallback", callback)) }
        var request = HTTPClientRequest(url: url(resource))
        request.method = .POST
        request.headers.add(name: "Authorization", value: Self.basicAuthorization(configuration))
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(fields)))

        var logger = provider.logger
        logger[metadataKey: "message.id"] = "\(messageID)"
        let (response, body) = try await provider.exchange(
            request, provider: "twilio", timeout: configuration.timeout, logger: logger)
        let status = Int(response.status.code)

        switch status {
        case 200..<300:
            let created = try? JSONDecoder().decode(CreatedResource.self, from: Data(body.readableBytesView))
            logger.debug(
                "twilio accepted \(what)",
                metadata: [
                    "twilio.sid": "\(created?.sid ?? "unknown")",
                    "twilio.status": "\(created?.status ?? "unknown")",
                ]
            )
            return created?.sid
        default:
            let twilioError = try? JSONDecoder().decode(ErrorResource.self, from: Data(body.readableBytesView))
            let reason = ["twilio", "\(status)", twilioError?.code.map { "\($0)" }].compactMap { $0 }
                .joined(separator: " ")
            // Twilio's `message` may quote the phone number, so only the code and the link are logged.
            logger.debug(
                "twilio refused \(what)",
                metadata: [
                    "http.status": "\(status)",
                    "twilio.code": "\(twilioError?.code.map { "\($0)" } ?? "none")",
                    "twilio.more_info": "\(twilioError?.moreInfo ?? "none")",
                ]
            )
            throw DeliveryError(Self.kind(ofStatus: status), reason)
        }
    }

    /// Creates one Message to `recipient` with `content` (a `Body`, or a Content Template and its variables), from
    /// the account's sender; both addresses are written as `address` makes them (WhatsApp's `whatsapp:+…`).
    /// `sender` names the sender in a refusal (`twilio`, `twilio whatsapp`), `what` the message in the logs.
    func createMessage(
        to recipient: String, content: [(String, String)], address: (String) -> String = { $0 }, messageID: String,
        sender: String, what: String
    ) async throws -> String? {
        let senderFields = configuration.senderFields(address: address)
        guard !senderFields.isEmpty else {
            throw DeliveryError(.permanent, "\(sender) needs a From number or a MessagingServiceSid")
        }
        return try await create(
            "Messages", fields: [("To", address(recipient))] + senderFields + content, messageID: messageID, what: what)
    }

    /// 429 and 5xx are worth retrying; other 4xx (and anything unexpected below 400) are not.
    static func kind(ofStatus status: Int) -> DeliveryError.Kind {
        switch status {
        case 429, 500..<600: .transient
        case 400..<500: .permanent
        default: .transient
        }
    }

    static func basicAuthorization(_ configuration: TwilioConfiguration) -> String {
        let credentials = Data("\(configuration.accountSID):\(configuration.authToken)".utf8)
        return "Basic \(credentials.base64EncodedString())"
    }

    /// The fields of a created Message or Call resource that are logged.
    private struct CreatedResource: Decodable {
        var sid: String?
        var status: String?
    }

    /// Twilio's error body: `{"code": 21211, "message": "…", "more_info": "https://…", "status": 400}`.
    private struct ErrorResource: Decodable {
        var code: Int?
        var message: String?
        var moreInfo: String?
        var status: Int?

        enum CodingKeys: String, CodingKey {
            case code, message, status
            case moreInfo = "more_info"
        }
    }
}

extension TwilioConfiguration {
    /// Who a message is from: `From` (written as `address` makes it), `MessagingServiceSid`, or both; empty when the
    /// account names neither.
    func senderFields(address: (String) -> String) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let from, !from.isEmpty { fields.append(("From", address(from))) }
        if let messagingServiceSID, !messagingServiceSID.isEmpty {
            fields.append(("MessagingServiceSid", messagingServiceSID))
        }
        return fields
    }
}
