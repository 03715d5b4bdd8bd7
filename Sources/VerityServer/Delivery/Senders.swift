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

/// Sends each notification with its platform's sender; platforms without one go to the console.
public struct PushRouter: PushSender {
    var apns: (any PushSender)?
    var fcm: (any PushSender)?
    var console: ConsolePushSender

    public init(apns: (any PushSender)?, fcm: (any PushSender)?, console: ConsolePushSender) {
        self.apns = apns
        self.fcm = fcm
        self.console = console
    }

    public func send(_ notification: PushNotification) async throws {
        switch notification.platform {
        case .apns: try await (apns ?? console).send(notification)
        case .fcm: try await (fcm ?? console).send(notification)
        case .none: try await console.send(notification)
        }
    }
}

/// The development push sender: logs that a challenge would have been pushed (devices can pull it), or that an app
/// verification's silent push would have been sent (never its secret: app verification needs APNs or FCM).
public struct ConsolePushSender: PushSender {
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ notification: PushNotification) async throws {
        if let data = notification.silentData {
            logger.notice(
                "Console push: a device would be sent a silent push; configure APNs or FCM to deliver it",
                metadata: [
                    "type": "\(data["type"] ?? "")", "platform": "\(notification.platform.rawValue)",
                    "message": "\(notification.id)",
                ])
            return
        }
        logger.notice(
            "Console push: a device would be told about a challenge",
            metadata: [
                "challenge": "\(notification.challengeId)", "factor": "\(notification.factorId)",
                "platform": "\(notification.platform.rawValue)",
            ])
    }
}

/// Turns a code message's outbox row into the text a person receives. The worker and `verity outbox list` share it.
struct MessageRenderer: Sendable {
    let codes: CodeGenerator
    /// The server's public URL, which instant links start with.
    let publicURL: String

    func render(_ delivery: OutboxStore.Delivery) -> OutgoingMessage? {
        let message = delivery.message
        guard let channel = message.channel.codeChannel else { return nil }
        if let verification = delivery.verification, verification.purpose.isLink {
            let link = "\(publicURL)/p/\(instantLinkToken(for: verification))"
            let body = MessageTemplates.renderLink(
                language: message.locale, projectName: delivery.projectName, link: link)
            return OutgoingMessage(id: message.id, channel: channel, to: message.destination, subject: nil, body: body)
        }
        let code = delivery.verification.map {
            codes.code(verificationId: $0.id, salt: $0.codeSalt, length: $0.codeLength)
        }
        let text = MessageTemplates.render(
            channel: channel, language: message.locale, projectName: delivery.projectName, code: code ?? "")
        var speech: OutgoingMessage.Speech?
        if channel == .voice {
            let spoken = MessageTemplates.speech(
                language: message.locale, projectName: delivery.projectName, code: code ?? "")
            speech = OutgoingMessage.Speech(language: spoken.voiceLanguage, lines: spoken.lines)
        }
        return OutgoingMessage(
            id: message.id, channel: channel, to: message.destination, subject: text.subject, body: text.body,
            code: code, language: message.locale, speech: speech)
    }

    /// The path token of an instant link: the verification id and its derived secret.
    func instantLinkToken(for verification: VerificationRecord) -> String {
        "\(verification.id).\(codes.linkSecret(verificationId: verification.id, salt: verification.codeSalt))"
    }
}
