import Foundation
import VerityCore

/// The text of code messages, per language.
///
/// `{project}` is the project's name and `{code}` the one-time code. A locale is matched by its language
/// (`es-MX` → `es`); a language without a template falls back to English.
///
/// A call says `voice` with the code spoken digit by digit, pauses, and says `voiceRepeat` with the code again, in
/// the voice of `voiceLanguage`. A WhatsApp message is `whatsapp`: what the console and a webhook show; WhatsApp's own
/// authentication templates have fixed wording that Meta translates, with the code as their one parameter.
enum MessageTemplates {
    struct Template: Sendable {
        var sms: String
        var subject: String
        var email: String
        var voice: String
        var voiceRepeat: String
        /// The text-to-speech language of calls (Twilio's `<Say language>`).
        var voiceLanguage: String
        /// What is said between two digits, so that each one is spoken on its own.
        var digitSeparator: String = ", "
        var whatsapp: String
    }

    static let fallback = "en"

    static let byLanguage: [String: Template] = [
        "en": Template(
            sms: "Your {project} verification code is: {code}",
            subject: "Your {project} verification code",
            email: "Your {project} verification code is: {code}\n\n"
                + "If you did not request this code, you can ignore this message.",
            voice: "Hello. Your {project} verification code is: {code}.",
            voiceRepeat: "To repeat: your code is {code}. Goodbye.", voiceLanguage: "en-US",
            whatsapp: "*{code}* is your {project} verification code. For your security, do not share this code."),
        "es": Template(
            sms: "Tu código de verificación de {project} es: {code}",
            subject: "Tu código de verificación de {project}",
            email: "Tu código de verificación de {project} es: {code}\n\n"
                + "Si no solicitaste este código, puedes ignorar este mensaje.",
            voice: "Hola. Tu código de verificación de {project} es: {code}.",
            voiceRepeat: "Repito: tu código es {code}. Adiós.", voiceLanguage: "es-ES",
            whatsapp: "*{code}* es tu código de verificación de {project}. Por tu seguridad, no lo compartas."),
        "fr": Template(
            sms: "Votre code de vérification {project} est : {code}",
            subject: "Votre code de vérification {project}",
            email: "Votre code de vérification {project} est : {code}\n\n"
                + "Si vous n'avez pas demandé ce code, vous pouvez ignorer ce message.",
            voice: "Bonjour. Votre code de vérification {project} est : {code}.",
            voiceRepeat: "Je répète : votre code est {code}. Au revoir.", voiceLanguage: "fr-FR",
            whatsapp: "*{code}* est votre code de vérification {project}. Pour votre sécurité, ne le partagez pas."),
        "de": Template(
            sms: "Ihr {project}-Bestätigungscode lautet: {code}",
            subject: "Ihr {project}-Bestätigungscode",
            email: "Ihr {project}-Bestätigungscode lautet: {code}\n\n"
                + "Wenn Sie diesen Code nicht angefordert haben, können Sie diese Nachricht ignorieren.",
            voice: "Hallo. Ihr {project}-Bestätigungscode lautet: {code}.",
            voiceRepeat: "Ich wiederhole: Ihr Code lautet {code}. Auf Wiederhören.", voiceLanguage: "de-DE",
            whatsapp:
                "*{code}* ist Ihr {project}-Bestätigungscode. Geben Sie diesen Code zu Ihrer Sicherheit nicht weiter."),
        "pt": Template(
            sms: "Seu código de verificação do {project} é: {code}",
            subject: "Seu código de verificação do {project}",
            email: "Seu código de verificação do {project} é: {code}\n\n"
                + "Se você não solicitou este código, ignore esta mensagem.",
            voice: "Olá. Seu código de verificação do {project} é: {code}.",
            voiceRepeat: "Repetindo: seu código é {code}. Tchau.", voiceLanguage: "pt-BR",
            whatsapp: "*{code}* é seu código de verificação do {project}. Por segurança, não compartilhe este código."),
        "ja": Template(
            sms: "{project}の認証コードは {code} です",
            subject: "{project}の認証コード",
            email: "{project}の認証コードは {code} です\n\n"
                + "このコードに心当たりがない場合は、このメッセージを無視してください。",
            voice: "{project}の認証コードは、{code}、です。",
            voiceRepeat: "もう一度繰り返します。コードは、{code}、です。", voiceLanguage: "ja-JP", digitSeparator: "、",
            whatsapp: "*{code}* は{project}の認証コードです。セキュリティのため、このコードは誰にも教えないでください。"),
    ]

    /// Instant-link messages (`{link}` is the URL to tap), per language; English for the others.
    static let linkByLanguage: [String: String] = [
        "en": "Tap to confirm this is your phone for {project}: {link}",
        "es": "Toca para confirmar que este es tu teléfono para {project}: {link}",
        "fr": "Touchez pour confirmer que ce téléphone est le vôtre pour {project} : {link}",
        "de": "Tippen Sie, um zu bestätigen, dass dies Ihr Telefon für {project} ist: {link}",
        "pt": "Toque para confirmar que este é o seu telefone para {project}: {link}",
        "ja": "{project}でこの電話番号を確認するにはタップしてください: {link}",
    ]

    static func renderLink(language: String, projectName: String, link: String) -> String {
        (linkByLanguage[language] ?? linkByLanguage[fallback] ?? "{link}")
            .replacingOccurrences(of: "{link}", with: link).replacingOccurrences(of: "{project}", with: projectName)
    }

    /// The language Verity will write in for a requested locale; nil when the locale is not a language tag.
    static func language(for locale: String?) -> String? {
        guard let locale else { return fallback }
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard locale.count <= 35, let first = parts.first, (2...3).contains(first.count),
            first.allSatisfy({ $0.isASCII && $0.isLetter }),
            parts.dropFirst().allSatisfy({
                (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            })
        else { return nil }
        let language = first.lowercased()
        return byLanguage[language] == nil ? fallback : language
    }

    /// The message for a code, in the verification's language; for a call, its lines one per line of the body.
    static func render(
        channel: Channel, language: String, projectName: String, code: String
    ) -> (subject: String?, body: String) {
        let template = template(for: language)
        switch channel {
        case .sms: return (nil, fill(template.sms, code: code, projectName: projectName))
        case .email:
            return (
                fill(template.subject, code: code, projectName: projectName),
                fill(template.email, code: code, projectName: projectName)
            )
        case .voice:
            return (nil, speech(language: language, projectName: projectName, code: code).lines.joined(separator: "\n"))
        case .whatsapp: return (nil, fill(template.whatsapp, code: code, projectName: projectName))
        }
    }

    /// What a call says, in the verification's language: the code digit by digit, then, after a pause, once more.
    static func speech(language: String, projectName: String, code: String) -> (voiceLanguage: String, lines: [String])
    {
        let template = template(for: language)
        let spoken = code.map(String.init).joined(separator: template.digitSeparator)
        return (
            template.voiceLanguage,
            [
                fill(template.voice, code: spoken, projectName: projectName),
                fill(template.voiceRepeat, code: spoken, projectName: projectName),
            ]
        )
    }

    private static func template(for language: String) -> Template {
        byLanguage[language] ?? byLanguage[fallback]
            ?? Template(
                sms: "{code}", subject: "", email: "{code}", voice: "{code}", voiceRepeat: "{code}",
                voiceLanguage: "en-US", whatsapp: "{code}")
    }

    /// The code goes in first: a project name that happens to contain "{code}" stays literal.
    private static func fill(_ text: String, code: String, projectName: String) -> String {
        text.replacingOccurrences(of: "{code}", with: code).replacingOccurrences(of: "{project}", with: projectName)
    }
}
