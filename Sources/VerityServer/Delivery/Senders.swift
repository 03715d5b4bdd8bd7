import AsyncHTTPClient
import Logging
import VerityCore

/// The sender for each kind of outbox message, with the name recorded in the outbox.
public struct Senders: Sendable {
    public var sms: any MessageSender
    public var smsName: String
    public var email: any MessageSender
    public var emailName: String
    /// Codes by phone call.
    public var voice: any MessageSender
    public var voiceName: String
    /// Codes by WhatsApp.
    public var whatsapp: any MessageSender
    public var whatsappName: String
    /// Push notifications, whatever the platform (see ``PushRouter``).
    public var push: any PushSender
    public var pushName: String
    /// Webhook events for the project's endpoint.
    public var events: any EventSender

    public init(
        sms: any MessageSender, smsName: String, email: any MessageSender, emailName: String,
        push: any PushSender = ConsolePushSender(logger: Logger(label: "verity")), pushName: String = "console",
        events: any EventSender = HTTPEventSender(logger: Logger(label: "verity")),
        voice: any MessageSender = ConsoleSender(logger: Logger(label: "verity")), voiceName: String = "console",
        whatsapp: any MessageSender = ConsoleSender(logger: Logger(label: "verity")), whatsappName: String = "console"
    ) {
        self.sms = sms
        self.smsName = smsName
        self.email = email
        self.emailName = emailName
        self.voice = voice
        self.voiceName = voiceName
        self.whatsapp = whatsapp
        self.whatsappName = whatsappName
        self.push = push
        self.pushName = pushName
        self.events = events
    }

    func sender(for channel: Channel) -> (sender: any MessageSender, name: String) {
        switch channel {
        case .sms: (sms, smsName)
        case .email: (email, emailName)
        case .voice: (voice, voiceName)
        case .whatsapp: (whatsapp, whatsappName)
        }
    }
}

extension Senders {
    /// Says at start-up which sender each channel uses, and warns when a server that listens beyond this machine keeps
    /// a channel's codes in its outbox (console delivery) instead of sending them.
    func logDelivery(host: String, logger: Logger) {
        let names = Channel.allCases.map { (channel: $0, name: sender(for: $0).name) }
        logger.notice(
            "Delivery", metadata: Dictionary(uniqueKeysWithValues: names.map { ($0.channel.rawValue, "\($0.name)") }))
        let kept = names.filter { $0.name == "console" }.map(\.channel.rawValue)
        guard !kept.isEmpty, host != "localhost", host != "::1", !host.hasPrefix("127.") else { return }
        let variables = kept.map { "VERITY_\($0.uppercased())_SENDER" }.joined(separator: ", ")
        logger.warning(
            """
            Codes by \(kept.joined(separator: ", ")) are not sent: console delivery keeps them in the outbox. \
            Name a sender with \(variables).
            """)
    }
}
