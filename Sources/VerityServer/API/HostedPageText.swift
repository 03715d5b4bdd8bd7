import Foundation
import Hummingbird

/// What Verity's hosted pages say, in every language they speak: the instant-link page (`/p/{token}`) and the hosted
/// passkey page (`/passkeys/{token}`), whose script's status lines the page hands the script as `data-msg-<code>`
/// attributes, by the stable code the script shows them with (the console's pages give none, and the script keeps
/// its English). A language is one more entry of ``byLanguage``; a page speaks it once every line is there.
enum HostedPageText {
    /// A line of a hosted page.
    enum Line: String, CaseIterable, Sendable {
        /// A link that expired or was used, on either page.
        case invalid
        // The instant-link page; `{project}` is the project's name.
        case phoneTitle, phoneDoneTitle, phoneConfirm, phoneButton, phoneDone, `continue`
        // The hosted passkey page.
        case passkeyRegisterTitle, passkeySignInTitle, passkeyDoneTitle, passkeyInvalidTitle
        case passkeyRegisterLead, passkeySignInLead, passkeyDone
        // The passkey script's lines, by their codes.
        case passkeyNotUsed = "passkey_not_used", passkeyExists = "passkey_exists"
        case originNotAllowed = "origin_not_allowed", passkeyFailed = "passkey_failed"
        case passkeysUnavailable = "passkeys_unavailable"
        /// A refusal by the server, whatever its code (`data-code` still names it); not in English, where the
        /// server's own message is shown.
        case refused

        static let scriptLines: [Line] = [
            .passkeyNotUsed, .passkeyExists, .originNotAllowed, .passkeyFailed, .passkeysUnavailable, .refused,
        ]
    }

    /// The lines of one language.
    struct Lines: Sendable {
        /// The language the lines are in: the one asked for, or English when the pages speak no other.
        let language: String
        private let lines: [Line: String]

        /// The lines in `language` (``MessageTemplates/language(for:)``'s tag).
        init(_ language: String) {
            if let lines = byLanguage[language] {
                (self.language, self.lines) = (language, lines)
            } else {
                (self.language, self.lines) = (MessageTemplates.fallback, byLanguage[MessageTemplates.fallback] ?? [:])
            }
        }

        subscript(_ line: Line) -> String { lines[line] ?? "" }

        /// The script's lines, as a form's `data-msg-<code>` attributes (`_` written `-`).
        var scriptAttributes: String {
            Line.scriptLines.compactMap { line in
                lines[line].map {
                    #" data-msg-\#(line.rawValue.replacingOccurrences(of: "_", with: "-"))="\#($0.markupEscaped)""#
                }
            }.joined()
        }
    }

    /// The language a browser asks for first (`Accept-Language`), as a tag of ``MessageTemplates``; English when it
    /// names none Verity has: for a page whose link names no language of its own.
    static func language(of request: Request) -> String {
        let header = request.headers[.acceptLanguage] ?? ""
        let first = header.split(separator: ",").first.map { $0.split(separator: ";")[0] } ?? ""
        return MessageTemplates.language(for: first.trimmingCharacters(in: .whitespaces)) ?? MessageTemplates.fallback
    }

    static let byLanguage: [String: [Line: String]] = [
        "en": [
            .invalid: "This link has expired or was already used.",
            .phoneTitle: "Confirm your phone", .phoneDoneTitle: "Phone confirmed",
            .phoneConfirm: "Confirm that this phone is yours to continue with {project}.",
            .phoneButton: "Yes, this is my phone",
            .phoneDone: "Done. You can go back to {project} on your other device.",
            .continue: "Continue",
            .passkeyRegisterTitle: "Add a passkey", .passkeySignInTitle: "Sign in with a passkey",
            .passkeyDoneTitle: "Done", .passkeyInvalidTitle: "Passkey",
            .passkeyRegisterLead: "Add a passkey to your {project} account.",
            .passkeySignInLead: "Sign in to {project} with your passkey.",
            .passkeyDone: "Done. You can close this page and go back to {project}.",
            .passkeyNotUsed:
                "No passkey was used: it was cancelled or timed out, or this device holds no passkey for this account.",
            .passkeyExists: "This authenticator holds a passkey for this account already.",
            .originNotAllowed: "The browser refused: this page is not on an address this account's passkeys allow.",
            .passkeyFailed: "The browser could not use a passkey.",
            .passkeysUnavailable:
                "This browser cannot use passkeys on this page: it needs a browser that offers passkeys, on HTTPS.",
        ],
        "es": [
            .invalid: "Este enlace ha caducado o ya se usó.",
            .phoneTitle: "Confirma tu teléfono", .phoneDoneTitle: "Teléfono confirmado",
            .phoneConfirm: "Confirma que este teléfono es tuyo para continuar con {project}.",
            .phoneButton: "Sí, es mi teléfono", .phoneDone: "Listo. Puedes volver a {project} en tu otro dispositivo.",
            .continue: "Continuar",
            .passkeyRegisterTitle: "Añadir una llave de acceso",
            .passkeySignInTitle: "Iniciar sesión con una llave de acceso", .passkeyDoneTitle: "Listo",
            .passkeyInvalidTitle: "Llave de acceso",
            .passkeyRegisterLead: "Añade una llave de acceso a tu cuenta de {project}.",
            .passkeySignInLead: "Inicia sesión en {project} con tu llave de acceso.",
            .passkeyDone: "Listo. Puedes cerrar esta página y volver a {project}.",
            .passkeyNotUsed:
                "No se usó ninguna llave de acceso: se canceló o se agotó el tiempo, o este dispositivo no tiene ninguna "
                + "para esta cuenta.",
            .passkeyExists: "Este autenticador ya tiene una llave de acceso para esta cuenta.",
            .originNotAllowed:
                "El navegador la rechazó: esta página no está en una dirección que permitan las llaves de acceso de esta "
                + "cuenta.",
            .passkeyFailed: "El navegador no pudo usar una llave de acceso.",
            .passkeysUnavailable:
                "Este navegador no puede usar llaves de acceso en esta página: hace falta un navegador que las ofrezca, "
                + "en HTTPS.",
            .refused: "Se rechazó la solicitud. Vuelve a cargar la página e inténtalo de nuevo.",
        ],
        "fr": [
            .invalid: "Ce lien a expiré ou a déjà été utilisé.",
            .phoneTitle: "Confirmez votre téléphone", .phoneDoneTitle: "Téléphone confirmé",
            .phoneConfirm: "Confirmez que ce téléphone est le vôtre pour continuer avec {project}.",
            .phoneButton: "Oui, c'est mon téléphone",
            .phoneDone: "C'est fait. Vous pouvez revenir à {project} sur votre autre appareil.",
            .continue: "Continuer",
            .passkeyRegisterTitle: "Ajouter une clé d'accès", .passkeySignInTitle: "Se connecter avec une clé d'accès",
            .passkeyDoneTitle: "Terminé", .passkeyInvalidTitle: "Clé d'accès",
            .passkeyRegisterLead: "Ajoutez une clé d'accès à votre compte {project}.",
            .passkeySignInLead: "Connectez-vous à {project} avec votre clé d'accès.",
            .passkeyDone: "C'est fait. Vous pouvez fermer cette page et revenir à {project}.",
            .passkeyNotUsed:
                "Aucune clé d'accès n'a été utilisée : l'opération a été annulée ou a expiré, ou cet appareil n'a pas de "
                + "clé d'accès pour ce compte.",
            .passkeyExists: "Cet authentificateur a déjà une clé d'accès pour ce compte.",
            .originNotAllowed:
                "Le navigateur a refusé : cette page n'est pas à une adresse que les clés d'accès de ce compte "
                + "autorisent.",
            .passkeyFailed: "Le navigateur n'a pas pu utiliser de clé d'accès.",
            .passkeysUnavailable:
                "Ce navigateur ne peut pas utiliser de clés d'accès sur cette page : il faut un navigateur qui les "
                + "propose, en HTTPS.",
            .refused: "La demande a été refusée. Rechargez la page et réessayez.",
        ],
        "de": [
            .invalid: "Dieser Link ist abgelaufen oder wurde bereits verwendet.",
            .phoneTitle: "Telefon bestätigen", .phoneDoneTitle: "Telefon bestätigt",
            .phoneConfirm: "Bestätigen Sie, dass dieses Telefon Ihnen gehört, um mit {project} fortzufahren.",
            .phoneButton: "Ja, das ist mein Telefon",
            .phoneDone: "Fertig. Sie können zu {project} auf Ihrem anderen Gerät zurückkehren.", .continue: "Weiter",
            .passkeyRegisterTitle: "Passkey hinzufügen", .passkeySignInTitle: "Mit Passkey anmelden",
            .passkeyDoneTitle: "Fertig", .passkeyInvalidTitle: "Passkey",
            .passkeyRegisterLead: "Fügen Sie Ihrem {project}-Konto einen Passkey hinzu.",
            .passkeySignInLead: "Melden Sie sich mit Ihrem Passkey bei {project} an.",
            .passkeyDone: "Fertig. Sie können diese Seite schließen und zu {project} zurückkehren.",
            .passkeyNotUsed:
                "Es wurde kein Passkey verwendet: Der Vorgang wurde abgebrochen oder ist abgelaufen, oder dieses Gerät "
                + "hat keinen Passkey für dieses Konto.",
            .passkeyExists: "Dieser Authenticator hat bereits einen Passkey für dieses Konto.",
            .originNotAllowed:
                "Der Browser hat abgelehnt: Diese Seite liegt nicht unter einer Adresse, die die Passkeys dieses Kontos "
                + "erlauben.",
            .passkeyFailed: "Der Browser konnte keinen Passkey verwenden.",
            .passkeysUnavailable:
                "Dieser Browser kann auf dieser Seite keine Passkeys verwenden: Dafür braucht es einen Browser mit "
                + "Passkeys, über HTTPS.",
            .refused: "Die Anfrage wurde abgelehnt. Laden Sie die Seite neu und versuchen Sie es erneut.",
        ],
    ]
}
