import Foundation
import VerityCore

/// Verify Passkeys' factors and challenges as Twilio shows them: on the `Passkeys/…` routes, and a passkey factor
/// among the entity's factors (`Entities/{identity}/Factors`).
enum TwilioPasskeyJSON {
    /// What a passkey factor and a passkey challenge show alike: the resource `sid` in the entity's `collection`
    /// (`Factors` or `Challenges`), where the entity is, and when the resource was made and last changed.
    private static func fields(
        sid: String, in collection: String, of entity: TwilioEntityAddress, created: Date, updated: Date,
        _ account: TwilioAccount, baseURL: String
    ) -> [String: JSONValue] {
        let url = "\(baseURL)/v2/Services/\(entity.serviceSid)/Entities/\(entity.identity)/\(collection)/\(sid)"
        return [
            "sid": .string(sid), "account_sid": .string(account.sid), "service_sid": .string(entity.serviceSid),
            "entity_sid": .string(entity.entitySid), "identity": .string(entity.identity),
            "date_created": TwilioJSON.date(created), "date_updated": TwilioJSON.date(updated),
            "factor_type": .string("passkeys"), "metadata": .null, "url": .string(url),
        ]
    }

    /// A passkey factor as Twilio shows it; `config` is the relying party its ceremonies use.
    static func factor(_ factor: TwilioPasskeyFactor, account: TwilioAccount, baseURL: String) -> [String: JSONValue] {
        let settings = factor.settings
        return fields(
            sid: factor.sid, in: "Factors", of: factor.entity, created: factor.createdAt, updated: factor.updatedAt,
            account, baseURL: baseURL
        ).merging([
            "binding": .null, "friendly_name": .string(factor.friendlyName), "status": .string(factor.status),
            "config": .object([
                "relying_party": .object([
                    "id": .string(settings.rpID), "name": .string(settings.rpName),
                    "origins": .array(settings.origins.map(JSONValue.string)),
                ]),
                "authenticator_attachment": .string(settings.attachment?.rawValue ?? "any"),
                "discoverable_credentials": .string(settings.residentKey.rawValue),
                "user_verification": .string(settings.userVerification.rawValue),
            ]),
        ]) { shared, _ in shared }
    }

    /// A passkey challenge as Twilio shows it.
    static func challenge(
        _ challenge: TwilioPasskeyChallenge, account: TwilioAccount, baseURL: String, now: Date
    ) -> [String: JSONValue] {
        fields(
            sid: challenge.sid, in: "Challenges", of: challenge.entity, created: challenge.createdAt,
            updated: challenge.updatedAt, account, baseURL: baseURL
        ).merging([
            "factor_sid": challenge.factorSid.map(JSONValue.string) ?? .null,
            "date_responded": challenge.respondedAt.map(TwilioJSON.date) ?? .null,
            "expiration_date": TwilioJSON.date(challenge.expiresAt),
            "status": .string(challenge.status(at: now)),
            "responded_reason": .string("none"), "details": .null, "hidden_details": .null, "links": .object([:]),
        ]) { shared, _ in shared }
    }

}
