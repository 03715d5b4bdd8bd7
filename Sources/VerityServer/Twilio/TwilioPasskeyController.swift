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
            TwilioPasskeyJSON.factor(factor, account: account, baseURL: baseURL),
            options: PublicKeyCredentialCreationOptionsJSON(options))
    }

    @Sendable func verifyFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await answer(request, context) { credential, service, account in
            let factor = try await passkeys.verifyFactor(
                try credential.registrationAnswer(), in: service, project: account.project)
            return TwilioPasskeyJSON.factor(factor, account: account, baseURL: baseURL)
        }
    }

    @Sendable func createChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let body = try await request.decodeJSON(ChallengeRequest.self, context: context)
        let (challenge, options) = try await passkeys.createChallenge(
            identity: body.identity, factorSid: body.factorSid, in: service, project: account.project)
        return try Self.created(
            TwilioPasskeyJSON.challenge(challenge, account: account, baseURL: baseURL, now: clock.now()),
            options: PublicKeyCredentialRequestOptionsJSON(options))
    }

    @Sendable func approveChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await answer(request, context) { credential, service, account in
            let challenge = try await passkeys.approve(
                try credential.assertionAnswer(), in: service, project: account.project)
            return TwilioPasskeyJSON.challenge(challenge, account: account, baseURL: baseURL, now: clock.now())
        }
    }

    /// An answer to a ceremony: the browser's credential (the standard JSON of its `PublicKeyCredential`) for `check`,
    /// and the factor it verified or the challenge it approved.
    private func answer(
        _ request: Request, _ context: VerityRequestContext,
        _ check: (PublicKeyCredentialJSON, TwilioServiceRecord, TwilioAccount) async throws -> [String: JSONValue]
    ) async throws -> Response {
        let (account, service) = try await scope(context)
        let credential = try await request.decodeJSON(PublicKeyCredentialJSON.self, context: context)
        return try TwilioJSON.response(object: try await check(credential, service, account))
    }

    // MARK: - Wire shapes

    private func scope(_ context: VerityRequestContext) async throws -> (TwilioAccount, TwilioServiceRecord) {
        let account = try TwilioAccount(context)
        return (account, try await services.service(try context.parameters.require("serviceSid"), in: account.project))
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
