import Foundation
import Hummingbird
import VerityCore

/// `/v2/Services/{VA}/Passkeys/…`: Verify Passkeys for the customer's backend. Unlike the rest of Verify these routes
/// take JSON bodies; the credentials are the standard JSON serialisation of a `PublicKeyCredential`, and the options
/// answered are the standard JSON forms under `publicKey`.
struct TwilioPasskeyController {
    let passkeys: TwilioPasskeys
    let services: TwilioServiceService
    let clock: any TimeSource
    let baseURL: String

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("Services/:serviceSid/Passkeys/Factors", use: createFactor)
        group.post("Services/:serviceSid/Passkeys/VerifyFactor", use: verifyFactor)
        group.post("Services/:serviceSid/Passkeys/Challenges", use: createChallenge)
        group.post("Services/:serviceSid/Passkeys/ApproveChallenge", use: approveChallenge)
    }

    /// twilio-python's `new_factors.create`.
    struct FactorRequest: Decodable {
        var friendlyName: String?
        var identity: String?
        var config: TwilioPasskeyConfig.FactorConfig?

        enum CodingKeys: String, CodingKey {
            case friendlyName = "friendly_name"
            case identity, config
        }
    }

    /// twilio-python's `new_challenge.create`.
    struct ChallengeRequest: Decodable {
        var identity: String?
        var factorSid: String?

        enum CodingKeys: String, CodingKey {
            case identity
            case factorSid = "factor_sid"
        }
    }

    @Sendable func createFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let body = try await request.decodeJSON(FactorRequest.self, context: context)
        let (factor, options) = try await passkeys.createFactor(
            friendlyName: body.friendlyName, identity: body.identity, config: body.config, in: service,
            project: account.project)
        return try Self.created(
            try self.body(factor, account), options: PublicKeyCredentialCreationOptionsJSON(options))
    }

    @Sendable func verifyFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let credential = try await request.decodeJSON(PublicKeyCredentialJSON.self, context: context)
        let factor = try await passkeys.verifyFactor(
            try credential.registrationAnswer(), in: service, project: account.project)
        return try TwilioJSON.response(object: try body(factor, account))
    }

    @Sendable func createChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let body = try await request.decodeJSON(ChallengeRequest.self, context: context)
        let (challenge, options) = try await passkeys.createChallenge(
            identity: body.identity, factorSid: body.factorSid, in: service, project: account.project)
        return try Self.created(self.body(challenge, account), options: PublicKeyCredentialRequestOptionsJSON(options))
    }

    @Sendable func approveChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let credential = try await request.decodeJSON(PublicKeyCredentialJSON.self, context: context)
        let challenge = try await passkeys.approve(
            try credential.assertionAnswer(), in: service, project: account.project)
        return try TwilioJSON.response(object: body(challenge, account))
    }

    // MARK: - Wire shapes

    private func scope(_ context: VerityRequestContext) async throws -> (TwilioAccount, TwilioServiceRecord) {
        let account = try TwilioAccount(context)
        return (account, try await services.service(try context.parameters.require("serviceSid"), in: account.project))
    }

    /// What a passkey factor and a passkey challenge show alike: the resource `sid` in the entity's `collection`
    /// (`Factors` or `Challenges`), where the entity is, and when the resource was made and last changed.
    private func fields(
        sid: String, in collection: String, of entity: TwilioEntityAddress, created: Date, updated: Date,
        _ account: TwilioAccount
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
    private func body(_ factor: TwilioPasskeyFactor, _ account: TwilioAccount) throws -> [String: JSONValue] {
        let settings = factor.settings
        return fields(
            sid: factor.sid, in: "Factors", of: factor.entity, created: factor.createdAt, updated: factor.updatedAt,
            account
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
    private func body(_ challenge: TwilioPasskeyChallenge, _ account: TwilioAccount) -> [String: JSONValue] {
        fields(
            sid: challenge.sid, in: "Challenges", of: challenge.entity, created: challenge.createdAt,
            updated: challenge.updatedAt, account
        ).merging([
            "factor_sid": challenge.factorSid.map(JSONValue.string) ?? .null,
            "date_responded": challenge.respondedAt.map(TwilioJSON.date) ?? .null,
            "expiration_date": TwilioJSON.date(challenge.expiresAt),
            "status": .string(challenge.status(at: clock.now())),
            "responded_reason": .string("none"), "details": .null, "hidden_details": .null, "links": .object([:]),
        ]) { shared, _ in shared }
    }

    /// A new factor or challenge: its `body` with its ceremony's `options` under `publicKey`. The options are shown only
    /// here, as Twilio does: they carry the ceremony's challenge.
    private static func created(_ body: [String: JSONValue], options: some Encodable) throws -> Response {
        var object = body
        object["options"] = .object(["publicKey": try json(options)])
        return try TwilioJSON.response(object: object, status: .created)
    }

    /// A WebAuthn JSON form as it is: its members keep the spec's camelCase names.
    private static func json(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: try TwilioJSON.plainEncoder.encode(value))
    }
}
