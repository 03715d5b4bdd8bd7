import Foundation
import VerityCore

/// The text of code messages, per language.
///
/// `{project}` is the project's name and `{code}` the one-time code. A locale is matched by its language
/// (`es-MX` → `es`); a language without a template falls back to English.
enum MessageTemplates {
    struct Template: Sendable {
        var sms: String
        var subject: String
        var email: String
    }

    static let fallback = "en"

    static let byLanguage: [String: Template] = [
        "en": Template(
            sms: "Your {project} verification code is: {code}",
            subject: "Your {project} verification code",
            email: "Your {project} verification code is: {code}\n\n"
                + "If you did not request this code, you can ignore this message."),
        "es": Template(
            sms: "Tu código de verificación de {project} es: {code}",
            subject: "Tu código de verificación de {project}",
            email: "Tu código de verificación de {project} es: {code}\n\n"
                + "Si no solicitaste este código, puedes ignorar este mensaje."),
        "fr": Template(
            sms: "Votre code de vérification {project} est : {code}",
            subject: "Votre code de vérification {project}",
            email: "Votre code de vérification {project} est : {code}\n\n"
                + "Si vous n'avez pas demandé ce code, vous pouvez ignorer ce message."),
        "de": Template(
            sms: "Ihr {project}-Bestätigungscode lautet: {code}",
            subject: "Ihr {project}-Bestätigungscode",
            email: "Ihr {project}-Bestätigungscode lautet: {code}\n\n"
                + "Wenn Sie diesen Code nicht angefordert haben, können Sie diese Nachricht ignorieren."),
        "pt": Template(
            sms: "Seu código de verificação do {project} é: {code}",
            subject: "Seu código de verificação do {project}",
            email: "Seu código de verificação do {project} é: {code}\n\n"
                + "Se você não solicitou este código, ignore esta mensagem."),
        "ja": Template(
            sms: "{project}の認証コードは {code} です",
            subject: "{project}の認証コード",
            email: "{project}の認証コードは {code} です\n\n"
                + "このコードに心当たりがない場合は、このメッセージを無視してください。"),
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

    /// The message for a code, in the verification's language.
    static func render(
        channel: Channel, language: String, projectName: String, code: String
    ) -> (subject: String?, body: String) {
        let template =
            byLanguage[language] ?? byLanguage[fallback] ?? Template(sms: "{code}", subject: "", email: "{code}")
        // The code goes in first: a project name that happens to contain "{code}" stays literal.
        func fill(_ text: String) -> String {
            text.replacingOccurrences(of: "{code}", with: code).replacingOccurrences(of: "{project}", with: projectName)
        }
        switch channel {
        case .sms: return (nil, fill(template.sms))
        case .email: return (fill(template.subject), fill(template.email))
        }
    }
}
