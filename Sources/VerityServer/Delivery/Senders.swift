import VerityCore

/// The sender for each channel, with the name recorded in the outbox (`console`, `twilio`, `smtp`, `webhook`).
public struct Senders: Sendable {
    public var sms: any MessageSender
    public var smsName: String
    public var email: any MessageSender
    public var emailName: String

    public init(sms: any MessageSender, smsName: String, email: any MessageSender, emailName: String) {
        self.sms = sms
        self.smsName = smsName
        self.email = email
        self.emailName = emailName
    }

    func sender(for channel: Channel) -> (sender: any MessageSender, name: String) {
        switch channel {
        case .sms: (sms, smsName)
        case .email: (email, emailName)
        }
    }
}

/// Turns an outbox row into the text a person receives. The worker and `verity outbox list` share it.
struct MessageRenderer: Sendable {
    let codes: CodeGenerator

    func render(_ delivery: OutboxStore.Delivery) -> OutgoingMessage {
        let message = delivery.message
        let code = delivery.verification.map {
            codes.code(verificationId: $0.id, salt: $0.codeSalt, length: $0.codeLength)
        }
        let text = MessageTemplates.render(
            channel: message.channel, language: message.locale, projectName: delivery.projectName,
            code: code ?? "")
        return OutgoingMessage(
            id: message.id, channel: message.channel, to: message.destination, subject: text.subject, body: text.body)
    }
}
