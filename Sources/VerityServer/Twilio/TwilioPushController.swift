import Foundation
import Hummingbird
import VerityCore

/// `/v2/Services/{VA}/Entities`, `…/Factors`, `…/Challenges`, `…/Notifications` and `/AccessTokens`: Verify Push
/// and TOTP, for the customer's backend and for devices speaking the Twilio Verify SDKs' protocol.
struct TwilioPushController {
    let push: TwilioPush
    let passkeys: TwilioPasskeys
    let services: TwilioServiceService
    let clock: any TimeSource
    let baseURL: String

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        let entity = "Services/:serviceSid/Entities/:identity"
        group.post("Services/:serviceSid/Entities", use: createEntity)
        group.get("Services/:serviceSid/Entities", use: listEntities)
        group.get(RouterPath(entity), use: fetchEntity)
        group.delete(RouterPath(entity), use: deleteEntity)
        group.post(RouterPath(entity + "/Factors"), use: createFactor)
        group.get(RouterPath(entity + "/Factors"), use: listFactors)
        group.get(RouterPath(entity + "/Factors/:factorSid"), use: fetchFactor)
        group.post(RouterPath(entity + "/Factors/:factorSid"), use: updateFactor)
        group.delete(RouterPath(entity + "/Factors/:factorSid"), use: deleteFactor)
        group.post(RouterPath(entity + "/Challenges"), use: createChallenge)
        group.get(RouterPath(entity + "/Challenges"), use: listChallenges)
        group.get(RouterPath(entity + "/Challenges/:challengeSid"), use: fetchChallenge)
        group.post(RouterPath(entity + "/Challenges/:challengeSid"), use: updateChallenge)
        group.post(RouterPath(entity + "/Challenges/:challengeSid/Notifications"), use: createNotification)
        group.post("Services/:serviceSid/AccessTokens", use: createAccessToken)
        group.get("Services/:serviceSid/AccessTokens/:tokenSid", use: fetchAccessToken)
        group.post("Services/:serviceSid/Webhooks", use: saveWebhook)
        group.get("Services/:serviceSid/Webhooks", use: listWebhooks)
        group.get("Services/:serviceSid/Webhooks/:webhookSid", use: fetchWebhook)
        group.post("Services/:serviceSid/Webhooks/:webhookSid", use: saveWebhook)
        group.delete("Services/:serviceSid/Webhooks/:webhookSid", use: deleteWebhook)
    }

    // MARK: - Entities

    @Sendable func createEntity(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let form = try await TwilioForm.body(of: request)
        let entity = try await push.createEntity(identity: try form.requiredString("Identity"), in: scope.service)
        return try TwilioJSON.response(object: body(entity, scope), status: .created)
    }

    @Sendable func listEntities(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let (found, meta) = try await TwilioPageMeta.page(
            try TwilioForm.query(of: request), sidPrefix: "YE", listURL: "\(serviceURL(scope))/Entities",
            key: "entities",
            fetch: { try await push.entities(in: scope.service, after: $0, limit: $1) },
            sid: \.sid)
        return try meta.response(found.map { .object(body($0, scope)) })
    }

    @Sendable func fetchEntity(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let entity = try await push.entity(try identity(context), in: scope.service)
        return try TwilioJSON.response(object: body(entity, scope))
    }

    @Sendable func deleteEntity(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let (identity, service, project) = (try identity(context), scope.service, scope.account.project)
        try await push.deleteEntity(identity, in: service, project: project) { [passkeys] work in
            try await passkeys.deleteEntity(identity, in: service, project: project, in: work)
        }
        return Response(status: .noContent)
    }

    // MARK: - Factors

    /// A push factor from a device holding an access token (`token:<access token>`), or a TOTP factor from the
    /// backend (twilio-python's `new_factors.create`).
    @Sendable func createFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let form = try await TwilioForm.body(of: request)
        let identity = try identity(context)
        if context.project == nil {
            guard let (user, token) = TwilioAuthenticator.basicCredentials(request), user == "token" else {
                throw TwilioError.authenticationFailed
            }
            let (factor, link, service, project) = try await push.enrollPush(
                form, accessToken: token, identity: identity, serviceSid: try context.parameters.require("serviceSid"))
            let scope = Scope(account: try TwilioAccount(project: project), service: service, caller: .device(factor))
            var object = try await body(factor, link, scope)
            object["binding"] = .object(["alg": .string("ES256"), "public_key": .string(factor.publicKey ?? "")])
            return try TwilioJSON.response(object: object, status: .created)
        }
        let scope = try await backendScope(context)
        switch try form.requiredString("FactorType") {
        case "push":
            let (factor, link) = try await push.createPushForBackend(
                form, identity: identity, in: scope.service, project: scope.account.project)
            var object = try await body(factor, link, scope)
            object["binding"] = .object(["alg": .string("ES256"), "public_key": .string(factor.publicKey ?? "")])
            return try TwilioJSON.response(object: object, status: .created)
        case "totp":
            let (factor, link, created) = try await push.createTOTP(
                form, identity: identity, in: scope.service, project: scope.account.project)
            var object = try await body(factor, link, scope)
            object["binding"] = .object(["secret": .string(created.secret), "uri": .string(created.uri)])
            return try TwilioJSON.response(object: object, status: .created)
        default:
            throw TwilioError.invalidParameter("FactorType", "push or totp")
        }
    }

    /// A factor among the entity's: a push or TOTP factor, or a Verify Passkeys factor.
    private enum EntityFactor: Sendable {
        case device(FactorRecord, TwilioFactorLink)
        case passkey(TwilioPasskeyFactor)

        var sid: String {
            switch self {
            case .device(let factor, _): TwilioSID.sid("YF", verityId: factor.id) ?? ""
            case .passkey(let factor): factor.sid
            }
        }
    }

    /// The entity's factors: its push and TOTP factors in creation order, then its passkey factors in creation order
    /// (a device sees only its own factor). A page token names the last factor of the page before, of either kind.
    @Sendable func listFactors(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        let identity = try identity(context)
        let (push, passkeys) = (push, passkeys)
        let (found, meta) = try await TwilioPageMeta.page(
            try TwilioForm.query(of: request), sidPrefix: "YF", listURL: "\(entityURL(scope, identity))/Factors",
            key: "factors",
            fetch: { after, limit -> [EntityFactor] in
                var page: [EntityFactor] = []
                var afterPasskey: TwilioPasskeyFactor?
                if let after, case .backend = scope.caller {
                    afterPasskey = try await passkeys.factor(after, identity: identity, in: scope.service)
                }
                if afterPasskey == nil {
                    page = try await push.factors(
                        identity: identity, in: scope.service, project: scope.account.project, caller: scope.caller,
                        after: after, limit: limit
                    ).map(EntityFactor.device)
                }
                guard page.count < limit, case .backend = scope.caller else { return page }
                return page
                    + (try await passkeys.factors(
                        identity: identity, in: scope.service, after: afterPasskey?.sid, limit: limit - page.count))
                    .map(EntityFactor.passkey)
            }, sid: \.sid)
        var items: [JSONValue] = []
        for factor in found { items.append(.object(try await body(factor, scope))) }
        return try meta.response(items)
    }

    @Sendable func fetchFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        return try TwilioJSON.response(object: try await body(try await factor(context, scope), scope))
    }

    @Sendable func updateFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        let (factor, link) = try await push.updateFactor(
            try context.parameters.require("factorSid"), try await TwilioForm.body(of: request),
            identity: try identity(context), in: scope.service, project: scope.account.project, caller: scope.caller)
        return try TwilioJSON.response(object: try await body(factor, link, scope))
    }

    @Sendable func deleteFactor(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        if let factor = try await passkeyFactor(context, scope) {
            try await passkeys.deleteFactor(factor, in: scope.service, project: scope.account.project)
        } else {
            try await push.deleteFactor(
                try context.parameters.require("factorSid"), identity: try identity(context), in: scope.service,
                project: scope.account.project, caller: scope.caller)
        }
        return Response(status: .noContent)
    }

    /// The factor the path names: a passkey factor (to the backend only), or else a push or TOTP factor.
    private func factor(_ context: VerityRequestContext, _ scope: Scope) async throws -> EntityFactor {
        if let factor = try await passkeyFactor(context, scope) { return .passkey(factor) }
        let (factor, link) = try await push.factor(
            try context.parameters.require("factorSid"), identity: try identity(context), in: scope.service,
            project: scope.account.project, caller: scope.caller)
        return .device(factor, link)
    }

    /// The passkey factor the path names, shown to the backend only; nil for any other SID.
    private func passkeyFactor(_ context: VerityRequestContext, _ scope: Scope) async throws -> TwilioPasskeyFactor? {
        guard case .backend = scope.caller else { return nil }
        return try await passkeys.factor(
            try context.parameters.require("factorSid"), identity: try identity(context), in: scope.service)
    }

    // MARK: - Challenges

    @Sendable func createChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let identity = try identity(context)
        let challenge = try await push.createChallenge(
            try await TwilioForm.body(of: request), identity: identity, in: scope.service,
            project: scope.account.project)
        return try TwilioJSON.response(object: try await body(challenge, identity, scope), status: .created)
    }

    @Sendable func listChallenges(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        let identity = try identity(context)
        let query = try TwilioForm.query(of: request)
        var factorId: String?
        if let sid = query.string("FactorSid") {
            factorId = try await push.factor(
                sid, identity: identity, in: scope.service, project: scope.account.project, caller: scope.caller
            ).0.id
        } else if case .device(let factor) = scope.caller {
            factorId = factor.id
        }
        let status = try query.string("Status").map { text in
            guard let status = ChallengeStatus(rawValue: text) else {
                throw TwilioError.invalidParameter("Status", "pending, expired, approved or denied")
            }
            return status
        }
        let descending: Bool
        switch query.string("Order") ?? "asc" {
        case "asc": descending = false
        case "desc": descending = true
        default: throw TwilioError.invalidParameter("Order", "asc or desc")
        }
        let (found, meta) = try await TwilioPageMeta.page(
            query, sidPrefix: "YC", listURL: "\(entityURL(scope, identity))/Challenges", key: "challenges",
            filters: [
                "FactorSid": query.string("FactorSid"), "Status": query.string("Status"),
                "Order": query.string("Order"),
            ],
            fetch: {
                try await push.challenges(
                    identity: identity, in: scope.service, project: scope.account.project, factorId: factorId,
                    status: status, descending: descending,
                    after: $0.flatMap { TwilioSID.verityId($0, prefix: "YC", idPrefix: "chl") }, limit: $1)
            }, sid: { TwilioSID.sid("YC", verityId: $0.id) ?? "" })
        var items: [JSONValue] = []
        for challenge in found { items.append(.object(try await body(challenge, identity, scope))) }
        return try meta.response(items)
    }

    /// The challenge; while it is pending (the only time a device may answer it), with the fields the answer signs
    /// in `Twilio-Verify-Signature-Fields`.
    @Sendable func fetchChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        let identity = try identity(context)
        let (challenge, _) = try await push.challenge(
            try context.parameters.require("challengeSid"), identity: identity, in: scope.service,
            project: scope.account.project, caller: scope.caller)
        let body = try await body(challenge, identity, scope)
        var response = try TwilioJSON.response(object: body)
        if body["status"] == .string(ChallengeStatus.pending.rawValue) {
            response.headers[Self.signatureFieldsHeader] = FactorDialect.twilio.answerFields.joined(separator: ",")
        }
        return response
    }

    @Sendable func updateChallenge(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await scope(context)
        let identity = try identity(context)
        let sid = try context.parameters.require("challengeSid")
        let form = try await TwilioForm.body(of: request)
        let (current, _) = try await push.challenge(
            sid, identity: identity, in: scope.service, project: scope.account.project, caller: scope.caller)
        let answered = try await push.answer(
            sid, authPayload: try form.requiredString("AuthPayload"),
            expected: try await body(current, identity, scope), identity: identity, in: scope.service,
            project: scope.account.project, caller: scope.caller)
        return try TwilioJSON.response(object: try await body(answered, identity, scope))
    }

    @Sendable func createNotification(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let identity = try identity(context)
        let (challenge, ttl) = try await push.notify(
            try context.parameters.require("challengeSid"), identity: identity,
            lifetime: try await TwilioForm.body(of: request).integer("Ttl"), in: scope.service,
            project: scope.account.project)
        let entity = try await push.entity(identity, in: scope.service)
        return try TwilioJSON.response(
            object: [
                "sid": .string(TwilioSID.make("NT", random: push.random)), "account_sid": .string(scope.account.sid),
                "service_sid": .string(scope.service.sid), "entity_sid": .string(entity.sid),
                "identity": .string(identity),
                "challenge_sid": .string(TwilioSID.sid("YC", verityId: challenge.id) ?? ""),
                "priority": .string("high"), "ttl": .integer(Int64(ttl)), "date_created": TwilioJSON.date(clock.now()),
            ], status: .created)
    }

    // MARK: - Access tokens

    @Sendable func createAccessToken(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let (token, secret) = try await push.createAccessToken(
            try await TwilioForm.body(of: request), in: scope.service, project: scope.account.project)
        return try TwilioJSON.response(object: body(token, secret: secret, scope), status: .created)
    }

    /// The token itself is shown only when created: Verity keeps its hash.
    @Sendable func fetchAccessToken(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let token = try await push.accessToken(try context.parameters.require("tokenSid"), in: scope.service)
        return try TwilioJSON.response(object: body(token, secret: nil, scope))
    }

    // MARK: - Webhooks

    /// Creates a webhook (on the collection) or changes one (on its SID).
    @Sendable func saveWebhook(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let sid = context.parameters.get("webhookSid")
        let webhook = try await push.saveWebhook(
            sid, try await TwilioForm.body(of: request), in: scope.service, project: scope.account.project)
        return try TwilioJSON.response(object: body(webhook, scope), status: sid == nil ? .created : .ok)
    }

    @Sendable func listWebhooks(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let (found, meta) = try await TwilioPageMeta.page(
            try TwilioForm.query(of: request), sidPrefix: "YW", listURL: "\(serviceURL(scope))/Webhooks",
            key: "webhooks",
            fetch: { try await push.webhooks(of: scope.service, after: $0, limit: $1) },
            sid: \.sid)
        return try meta.response(found.map { .object(body($0, scope)) })
    }

    @Sendable func fetchWebhook(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        let webhook = try await push.webhook(try context.parameters.require("webhookSid"), in: scope.service)
        return try TwilioJSON.response(object: body(webhook, scope))
    }

    @Sendable func deleteWebhook(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let scope = try await backendScope(context)
        try await push.deleteWebhook(try context.parameters.require("webhookSid"), in: scope.service)
        return Response(status: .noContent)
    }

    // MARK: - Scope

    private static let signatureFieldsHeader: HTTPFields.Element.Name = {
        guard let name = HTTPFields.Element.Name("Twilio-Verify-Signature-Fields") else {
            preconditionFailure("a valid header name")
        }
        return name
    }()

    struct Scope {
        var account: TwilioAccount
        var service: TwilioServiceRecord
        var caller: TwilioCaller
    }

    /// The account, the service in the path and the caller; a device's factor must belong to that service.
    private func scope(_ context: VerityRequestContext) async throws -> Scope {
        try await scope(context, allowingDevice: true)
    }

    /// As ``scope(_:)``, for routes only the customer's backend may call.
    private func backendScope(_ context: VerityRequestContext) async throws -> Scope {
        try await scope(context, allowingDevice: false)
    }

    private func scope(_ context: VerityRequestContext, allowingDevice: Bool) async throws -> Scope {
        let account = try TwilioAccount(context, allowingDevice: allowingDevice)
        let service = try await services.service(try context.parameters.require("serviceSid"), in: account.project)
        return Scope(account: account, service: service, caller: context.deviceFactor.map { .device($0) } ?? .backend)
    }

    private func identity(_ context: VerityRequestContext) throws -> String {
        let identity = try context.parameters.require("identity")
        // Longer than any identity: a 400 rather than a 404 for an entity that cannot exist.
        guard identity.unicodeScalars.count <= FactorDialect.twilio.userIdLengths.upperBound else {
            throw TwilioError.invalidParameter("Identity")
        }
        return identity
    }

    private func serviceURL(_ scope: Scope) -> String {
        "\(baseURL)/v2/Services/\(scope.service.sid)"
    }

    private func entityURL(_ scope: Scope, _ identity: String) -> String {
        "\(serviceURL(scope))/Entities/\(identity)"
    }

    // MARK: - Wire shapes (built as JSON values: a customer's keys keep their case)

    private func body(_ entity: TwilioEntity, _ scope: Scope) -> [String: JSONValue] {
        let url = entityURL(scope, entity.identity)
        return [
            "sid": .string(entity.sid), "identity": .string(entity.identity), "account_sid": .string(scope.account.sid),
            "service_sid": .string(entity.serviceSid), "date_created": TwilioJSON.date(entity.createdAt),
            "date_updated": TwilioJSON.date(entity.updatedAt), "url": .string(url),
            "links": .object([
                "factors": .string("\(url)/Factors"), "new_factors": .string("\(url)/Factors"),
                "challenges": .string("\(url)/Challenges"),
            ]),
        ]
    }

    private func entitySid(_ identity: String, _ scope: Scope) async throws -> JSONValue {
        (try await push.findEntity(identity, in: scope.service)).map { .string($0.sid) }
            ?? .null
    }

    private func body(_ factor: EntityFactor, _ scope: Scope) async throws -> [String: JSONValue] {
        switch factor {
        case .device(let factor, let link): try await body(factor, link, scope)
        case .passkey(let factor): TwilioPasskeyJSON.factor(factor, account: scope.account, baseURL: baseURL)
        }
    }

    private func body(_ factor: FactorRecord, _ link: TwilioFactorLink, _ scope: Scope) async throws
        -> [String: JSONValue]
    {
        let sid = TwilioSID.sid("YF", verityId: factor.id) ?? ""
        let config: [String: JSONValue] =
            switch factor.type {
            case .push:
                [
                    "sdk_version": factor.sdkVersion.map(JSONValue.string) ?? .null,
                    "app_id": factor.appId.map(JSONValue.string) ?? .null,
                    "notification_platform": .string(Self.platformName(factor.pushPlatform ?? .none)),
                    "notification_token": factor.pushToken.map(JSONValue.string) ?? .null,
                    "credential_sid": .string(TwilioSID.sid("CR", verityId: factor.id) ?? ""),
                ]
            case .totp:
                [
                    "alg": .string((factor.totpAlgorithm ?? "SHA1").lowercased()),
                    "skew": .integer(Int64(link.totpWindow)),
                    "code_length": .integer(Int64(factor.totpDigits ?? 6)),
                    "time_step": .integer(Int64(factor.totpPeriod ?? 30)),
                ]
            }
        return [
            "sid": .string(sid), "account_sid": .string(scope.account.sid), "service_sid": .string(link.serviceSid),
            "entity_sid": try await entitySid(link.identity, scope), "identity": .string(link.identity),
            "binding": .null, "options": .null, "date_created": TwilioJSON.date(factor.createdAt),
            "date_updated": TwilioJSON.date(max(link.updatedAt, factor.verifiedAt ?? factor.createdAt)),
            "friendly_name": .string(factor.friendlyName), "status": .string(factor.status.rawValue),
            "factor_type": .string(factor.type.rawValue), "config": .object(config),
            "metadata": factor.metadata.map { .object($0.mapValues(JSONValue.string)) } ?? .null,
            "url": .string("\(entityURL(scope, link.identity))/Factors/\(sid)"),
        ]
    }

    private func body(_ challenge: ChallengeRecord, _ identity: String, _ scope: Scope) async throws
        -> [String: JSONValue]
    {
        let sid = TwilioSID.sid("YC", verityId: challenge.id) ?? ""
        let url = "\(entityURL(scope, identity))/Challenges/\(sid)"
        var details: [String: JSONValue] = [
            "message": .string(challenge.message),
            "fields": .array(
                challenge.details.map { .object(["label": .string($0.label), "value": .string($0.value)]) }),
        ]
        if scope.service.push.includeDate { details["date"] = TwilioJSON.date(challenge.createdAt) }
        return [
            "sid": .string(sid), "account_sid": .string(scope.account.sid), "service_sid": .string(scope.service.sid),
            "entity_sid": try await entitySid(identity, scope), "identity": .string(identity),
            "factor_sid": .string(challenge.factorId.flatMap { TwilioSID.sid("YF", verityId: $0) } ?? ""),
            "date_created": TwilioJSON.date(challenge.createdAt),
            "date_updated": TwilioJSON.date(challenge.respondedAt ?? challenge.createdAt),
            "date_responded": challenge.respondedAt.map(TwilioJSON.date) ?? .null,
            "expiration_date": TwilioJSON.date(challenge.expiresAt),
            "status": .string(challenge.status(at: clock.now()).rawValue), "responded_reason": .string("none"),
            "details": .object(details),
            "hidden_details": challenge.hiddenDetails.isEmpty
                ? .null : .object(challenge.hiddenDetails.mapValues(JSONValue.string)),
            "metadata": .null, "factor_type": .string(challenge.type.rawValue), "url": .string(url),
            "links": .object(["notifications": .string("\(url)/Notifications")]),
        ]
    }

    /// Twilio's names: `apn`, `fcm`, `none`.
    private static func platformName(_ platform: PushPlatform) -> String {
        switch platform {
        case .apns: "apn"
        case .fcm: "fcm"
        case .none: "none"
        }
    }

    private func body(_ webhook: TwilioWebhook, _ scope: Scope) -> [String: JSONValue] {
        [
            "sid": .string(webhook.sid), "service_sid": .string(webhook.serviceSid),
            "account_sid": .string(scope.account.sid), "friendly_name": .string(webhook.friendlyName),
            "event_types": .array(webhook.eventTypes.map(JSONValue.string)),
            "status": .string(webhook.enabled ? "enabled" : "disabled"), "version": .string(webhook.version),
            "webhook_url": .string(webhook.url), "webhook_method": .string("POST"),
            "date_created": TwilioJSON.date(webhook.createdAt), "date_updated": TwilioJSON.date(webhook.updatedAt),
            "url": .string("\(serviceURL(scope))/Webhooks/\(webhook.sid)"),
        ]
    }

    private func body(_ token: TwilioAccessToken, secret: String?, _ scope: Scope) -> [String: JSONValue] {
        [
            "sid": .string(token.sid), "account_sid": .string(scope.account.sid),
            "service_sid": .string(token.serviceSid), "entity_identity": .string(token.identity),
            "factor_type": .string("push"),
            "factor_friendly_name": token.factorFriendlyName.map(JSONValue.string) ?? .null,
            "token": secret.map(JSONValue.string) ?? .null, "ttl": .integer(Int64(token.ttl)),
            "date_created": TwilioJSON.date(token.createdAt),
            "url": .string("\(serviceURL(scope))/AccessTokens/\(token.sid)"),
        ]
    }
}
