import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// How to reach Twilio's Programmable Messaging API.
///
/// One of ``from`` and ``messagingServiceSID`` is required; when both are set, both are sent, and Twilio sends from
/// ``from`` with the Messaging Service's settings.
public struct TwilioConfiguration: Sendable, CustomStringConvertible {
    /// The account SID (`AC…`): the user name of HTTP Basic auth, and part of the request path.
    public var accountSID: String
    /// The account's auth token: the password of HTTP Basic auth. Never logged.
    public var authToken: String
    /// The sender: an E.164 number or an alphanumeric sender ID, sent as `From`.
    public var from: String?
    /// A Messaging Service (`MG…`) that picks the sender, sent as `MessagingServiceSid`.
    public var messagingServiceSID: String?
    /// The API origin, without a trailing path; a local stand-in in tests.
    public var baseURL: String
    /// How long one request, response body included, may take before it counts as a transient failure.
    public var timeout: Duration

    /// Creates a configuration.
    public init(
        accountSID: String,
        authToken: String,
        from: String? = nil,
        messagingServiceSID: String? = nil,
        baseURL: String = "https://api.twilio.com",
        timeout: Duration = .seconds(15)
    ) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.messagingServiceSID = messagingServiceSID
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// Describes the configuration with the auth token redacted.
    public var description: String {
        "TwilioConfiguration(accountSID: \(accountSID), authToken: <redacted>, from: \(from ?? "nil"), "
            + "messagingServiceSID: \(messagingServiceSID ?? "nil"), baseURL: \(baseURL), timeout: \(timeout))"
    }
}

/// Sends SMS through Twilio's Messaging API.
///
/// Each message is one `POST {baseURL}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded, with HTTP Basic
/// auth. A 2xx answer (Twilio answers 201 with the new Message resource) is success. 429 and 5xx answers, network
/// errors and timeouts are transient; any other 4xx is permanent, with the reason `twilio <status> <code>` (for
/// example `twilio 400 21211` for an invalid `To` number).
///
/// Twilio has no idempotency key for creating messages, so a retry after a lost response may send a second SMS.
public struct TwilioSMSSender: MessageSender {
    let configuration: TwilioConfiguration
    let provider: ProviderClient

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The account, sender and endpoint.
    ///   - provider: The client and the logger (never given the auth token, the message body or the full phone
    ///     number).
    public init(configuration: TwilioConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
    }

    /// Sends one SMS. Throws a ``DeliveryError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .sms else {
            throw DeliveryError(.permanent, "twilio sends sms only, not \(message.channel.rawValue)")
        }
        let senderFields = Self.senderFields(configuration)
        guard !senderFields.isEmpty else {
            throw DeliveryError(.permanent, "twilio needs a From number or a MessagingServiceSid")
        }
        let fields = [("To", message.to)] + senderFields + [("Body", message.body)]

        var request = HTTPClientRequest(url: messagesURL)
        request.method = .POST
        request.headers.add(name: "Authorization", value: Self.basicAuthorization(configuration))
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(fields)))

        let logger = provider.logger.with(messageID: message.id)
        let (status, body) = try await exchange(request, logger: logger)

        switch status {
        case 200..<300:
            let resource = try? JSONDecoder().decode(MessageResource.self, from: Data(body.readableBytesView))
            logger.debug(
                "twilio accepted sms",
                metadata: [
                    "twilio.sid": "\(resource?.sid ?? "unknown")",
                    "twilio.status": "\(resource?.status ?? "unknown")",
                ]
            )
        default:
            let twilioError = try? JSONDecoder().decode(ErrorResource.self, from: Data(body.readableBytesView))
            let reason = ["twilio", "\(status)", twilioError?.code.map { "\($0)" }].compactMap { $0 }
                .joined(separator: " ")
            // Twilio's `message` may quote the phone number, so only the code and the link are logged.
            logger.debug(
                "twilio refused sms",
                metadata: [
                    "http.status": "\(status)",
                    "twilio.code": "\(twilioError?.code.map { "\($0)" } ?? "none")",
                    "twilio.more_info": "\(twilioError?.moreInfo ?? "none")",
                ]
            )
            throw DeliveryError(Self.kind(ofStatus: status), reason)
        }
    }

    /// `{baseURL}/2010-04-01/Accounts/{AccountSid}/Messages.json`.
    var messagesURL: String {
        var base = Substring(configuration.baseURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        return "\(base)/2010-04-01/Accounts/\(configuration.accountSID)/Messages.json"
    }

    /// 429 and 5xx are worth retrying; other 4xx (and anything unexpected below 400) are not.
    static func kind(ofStatus status: Int) -> DeliveryError.Kind {
        switch status {
        case 429, 500..<600: .transient
        case 400..<500: .permanent
        default: .transient
        }
    }

    static func senderFields(_ configuration: TwilioConfiguration) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let from = configuration.from, !from.isEmpty { fields.append(("From", from)) }
        if let service = configuration.messagingServiceSID, !service.isEmpty {
            fields.append(("MessagingServiceSid", service))
        }
        return fields
    }

    static func basicAuthorization(_ configuration: TwilioConfiguration) -> String {
        let credentials = Data("\(configuration.accountSID):\(configuration.authToken)".utf8)
        return "Basic \(credentials.base64EncodedString())"
    }

    /// Sends the request and reads the (small) response within the configured timeout. The first 64 KiB are enough
    /// for any Twilio answer; the rest is drained, so a 2xx never turns into a failure (and a retry that sends a
    /// second SMS) because its body was long.
    private func exchange(_ request: HTTPClientRequest, logger: Logger) async throws -> (Int, ByteBuffer) {
        let (response, body) = try await provider.exchange(
            request, provider: "twilio", timeout: configuration.timeout, logger: logger)
        return (Int(response.status.code), body)
    }

    /// The fields of Twilio's Message resource that are logged.
    private struct MessageResource: Decodable {
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

extension Logger {
    /// A copy of the logger that tags every line with the outbox message id.
    fileprivate func with(messageID: String) -> Logger {
        var logger = self
        logger[metadataKey: "message.id"] = "\(messageID)"
        return logger
    }
}
