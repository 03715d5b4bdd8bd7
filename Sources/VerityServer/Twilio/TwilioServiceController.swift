import Foundation
import Hummingbird
import VerityCore

/// `/v2/Services`: create, list, fetch, update and delete Twilio Verify services.
struct TwilioServiceController {
    let services: TwilioServiceService
    let push: TwilioPush
    /// The face's absolute base URL (`https://verity.example/twilio`), for `url` and `links`.
    let baseURL: String

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("Services", use: create)
        group.get("Services", use: list)
        group.get("Services/:serviceSid", use: fetch)
        group.post("Services/:serviceSid", use: update)
        group.delete("Services/:serviceSid", use: delete)
    }

    @Sendable func create(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let account = try TwilioAccount(context)
        let service = try await services.create(try await TwilioForm.body(of: request), in: account.project)
        return try TwilioJSON.response(body(service, account: account), status: .created)
    }

    @Sendable func list(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let account = try TwilioAccount(context)
        let (found, meta) = try await TwilioPageMeta.page(
            try TwilioForm.query(of: request), sidPrefix: "VA", listURL: "\(baseURL)/v2/Services", key: "services",
            fetch: { try await services.list(after: $0, limit: $1, in: account.project) }, sid: \.sid)
        return try TwilioJSON.response(ServiceList(services: found.map { body($0, account: account) }, meta: meta))
    }

    @Sendable func fetch(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let account = try TwilioAccount(context)
        let service = try await services.service(try context.parameters.require("serviceSid"), in: account.project)
        return try TwilioJSON.response(body(service, account: account))
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let account = try TwilioAccount(context)
        let service = try await services.update(
            try context.parameters.require("serviceSid"), try await TwilioForm.body(of: request), in: account.project)
        return try TwilioJSON.response(body(service, account: account))
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let account = try TwilioAccount(context)
        try await push.deleteService(try context.parameters.require("serviceSid"), in: account.project)
        return Response(status: .noContent)
    }

    // MARK: - Wire shapes

    struct ServiceList: Encodable {
        var services: [ServiceBody]
        var meta: TwilioPageMeta
    }

    /// A service as Twilio returns it; settings of features Verity does not have read as off.
    struct ServiceBody: Encodable {
        var sid: String
        var accountSid: String
        var friendlyName: String
        var codeLength: Int
        var lookupEnabled = false
        var psd2Enabled = false
        var skipSmsToLandlines = false
        var dtmfInputRequired = false
        var ttsName = Nullable<String>.null
        var doNotShareWarningEnabled = false
        var customCodeEnabled = false
        var push: Push
        var totp: TOTP
        var whatsapp = WhatsApp()
        /// The `Passkeys.*` settings, null while none is set.
        var passkeys: JSONValue
        var defaultTemplateSid = Nullable<String>.null
        var verifyEventSubscriptionEnabled = false
        var dateCreated: Date
        var dateUpdated: Date
        var url: String
        var links: [String: String]

        struct Push: Encodable {
            var includeDate: Bool
            var apnCredentialSid: Nullable<String>
            var fcmCredentialSid: Nullable<String>
        }

        struct TOTP: Encodable {
            var issuer: String
            var timeStep: Int
            var codeLength: Int
            var skew: Int
        }

        struct WhatsApp: Encodable {
            var msgServiceSid = Nullable<String>.null
            var from = Nullable<String>.null
        }
    }

    private func body(_ service: TwilioServiceRecord, account: TwilioAccount) -> ServiceBody {
        let url = "\(baseURL)/v2/Services/\(service.sid)"
        let links = [
            "verification_checks": "VerificationCheck", "verifications": "Verifications", "rate_limits": "RateLimits",
            "messaging_configurations": "MessagingConfigurations", "entities": "Entities", "webhooks": "Webhooks",
            "access_tokens": "AccessTokens",
        ].mapValues { "\(url)/\($0)" }
        return ServiceBody(
            sid: service.sid, accountSid: account.sid, friendlyName: service.friendlyName,
            codeLength: service.codeLength,
            push: .init(
                includeDate: service.push.includeDate, apnCredentialSid: Nullable(service.push.apnCredentialSid),
                fcmCredentialSid: Nullable(service.push.fcmCredentialSid)),
            totp: .init(
                issuer: service.totp.issuer ?? service.friendlyName, timeStep: service.totp.timeStep,
                codeLength: service.totp.codeLength, skew: service.totp.skew),
            passkeys: service.passkeys.isEmpty ? .null : service.passkeys.json,
            dateCreated: service.createdAt, dateUpdated: service.updatedAt, url: url, links: links)
    }
}
