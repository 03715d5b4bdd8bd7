import AsyncHTTPClient
import Logging
import VerityCore

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
