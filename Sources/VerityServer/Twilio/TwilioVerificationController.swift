import Foundation
import Hummingbird
import VerityCore

/// `/v2/Services/{VA}/Verifications` and `/VerificationCheck`: Twilio's one-time codes, run by Verity's
/// ``VerificationService`` (same code on re-send, 5 sends, 5 checks, single approval); and Silent Network Auth
/// (`Channel=sna`), run by ``PossessionService``'s carrier check.
struct TwilioVerificationController {
    let services: TwilioServiceService
    let verifications: VerificationService
    let possessions: PossessionService
    let clock: any TimeSource
    /// The face's absolute base URL, for `url`.
    let baseURL: String

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("Services/:serviceSid/Verifications", use: create)
        group.get("Services/:serviceSid/Verifications/:sid", use: fetch)
        group.post("Services/:serviceSid/Verifications/:sid", use: update)
        group.post("Services/:serviceSid/VerificationCheck", use: check)
    }

    @Sendable func create(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let form = try await TwilioForm.body(of: request)
        let to = try form.requiredString("To")
        let channelName = try form.requiredString("Channel")
        try Self.refuseUnsupported(form, "CustomCode", "Amount", "Payee")
        if channelName == "sna" { return try await createSNA(to: to, service: service, account: account) }
        let channel = try Self.channel(channelName)
        let now = clock.now()
        let record = try await verifications.start(
            StartVerificationRequest(to: to, channel: channel, locale: form.string("Locale")),
            purpose: service.verificationPurpose, codeLength: service.codeLength, in: account.project, now: now)
        return try TwilioJSON.response(
            try await body(record, service: service, account: account, now: now), status: .created)
    }

    @Sendable func fetch(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let now = clock.now()
        let record = try await verifications.verification(
            id: try verityId(context), purpose: service.verificationPurpose, in: account.project)
        // Twilio deletes a verification once it is approved, canceled, expired or out of checks.
        guard record.status(at: now) == .pending else { throw VerityError(.verificationNotFound) }
        return try TwilioJSON.response(try await body(record, service: service, account: account, now: now))
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let form = try await TwilioForm.body(of: request)
        let id = try verityId(context)
        let now = clock.now()
        let record: VerificationRecord
        switch try form.requiredString("Status") {
        case "canceled":
            do {
                record = try await verifications.cancel(
                    id: id, purpose: service.verificationPurpose, in: account.project, now: now)
            } catch let error as VerityError where error.code == .conflict {
                throw VerityError(.verificationNotFound)
            }
        case "approved":
            record = try await verifications.approveWithoutCode(
                id: id, purpose: service.verificationPurpose, in: account.project, now: now)
        default:
            throw TwilioError.invalidParameter("Status", "canceled or approved")
        }
        return try TwilioJSON.response(try await body(record, service: service, account: account, now: now))
    }

    @Sendable func check(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let (account, service) = try await scope(context)
        let form = try await TwilioForm.body(of: request)
        try Self.refuseUnsupported(form, "Amount", "Payee")
        if form.string("Code") == nil, let answer = try await checkSNA(form, service: service, account: account) {
            return answer
        }
        let code = try form.requiredString("Code")
        let checked: CheckVerificationRequest
        if let sid = form.string("VerificationSid") {
            guard let id = TwilioSID.verityId(sid, prefix: "VE", idPrefix: "ver") else {
                throw VerityError(.verificationNotFound)
            }
            checked = CheckVerificationRequest(id: id, code: code)
        } else if let to = form.string("To"), !to.isEmpty {
            checked = CheckVerificationRequest(to: to, code: code)
        } else {
            throw TwilioError(
                code: 60221, message: "Either a 'To' number or 'VerificationSid' must be specified", status: 400)
        }
        let now = clock.now()
        let record: VerificationRecord
        let approved: Bool
        // By `To` too, a verification out of checks is 429 60202 until it expires, as on Twilio.
        switch try await verifications.check(
            checked, purpose: service.verificationPurpose, in: account.project, now: now, limitByDestination: true)
        {
        case .approved(let verification): (record, approved) = (verification, true)
        case .wrong(let verification): (record, approved) = (verification, false)
        }
        // As on Twilio, a wrong code answers `pending` even when it was the last one allowed: the limit shows on the
        // next check, as 429 60202 ("attempted to check a verification more than 5 times").
        let status = record.status(at: now) == .maxAttemptsReached ? .pending : record.status(at: now)
        var body = try fields(record, status: status, service: service, account: account).check
        body.valid = approved
        return try TwilioJSON.response(body)
    }

    // MARK: - Silent Network Auth

    /// `Channel=sna`: a possession flow owned by the service, proven by the carrier check; `sna.url` is the carrier
    /// authorization URL the device opens over mobile data.
    private func createSNA(to: String, service: TwilioServiceRecord, account: TwilioAccount) async throws -> Response {
        let started = try await possessions.startCarrierCheck(phoneNumber: to, owner: service.sid, in: account.project)
        guard
            let flow = try await possessions.ownedFlow(
                id: started.correlationId, phoneNumber: nil, owner: service.sid, in: account.project),
            let url = started.carrierAuthorizationUrl
        else { throw VerityError(.internalError, "A started carrier check has no flow or no URL.") }
        var body = try snaFields(flow, service: service, account: account)
        body.sendCodeAttempts = []
        body.sna = Nullable(VerificationBody.SNA(url: url))
        return try TwilioJSON.response(body, status: .created)
    }

    /// A check without a `Code`: the service's SNA verification, by `VerificationSid` or the newest for `To`. Approved,
    /// once, when the carrier confirmed the number; otherwise pending, with the reason in `sna_attempts_error_codes`. Nil
    /// when there is no SNA verification to check (the check then needs its `Code`).
    private func checkSNA(_ form: TwilioForm, service: TwilioServiceRecord, account: TwilioAccount) async throws
        -> Response?
    {
        var id: String?
        if let sid = form.string("VerificationSid") {
            guard let flowId = TwilioSID.verityId(sid, prefix: "VE", idPrefix: "pos") else { return nil }
            id = flowId
        }
        let to = form.string("To").flatMap { $0.isEmpty ? nil : $0 }
        guard id != nil || to != nil,
            let flow = try await possessions.ownedFlow(id: id, phoneNumber: to, owner: service.sid, in: account.project)
        else { return nil }
        let status = flow.status(at: clock.now())
        // Twilio forgets a verification once it is over: an expired or failed flow is not found.
        guard [.created, .succeeded].contains(status) else { throw VerityError(.verificationNotFound) }
        var body = try snaFields(flow, service: service, account: account).check
        if status == .succeeded {
            // The approval is the flow's one validation: Twilio forgets an approved verification, so a second check
            // finds nothing.
            guard try await possessions.validate(id: flow.id, in: account.project).success else {
                throw VerityError(.verificationNotFound)
            }
            (body.status, body.valid) = (VerificationStatus.approved.rawValue, true)
        } else {
            body.snaAttemptsErrorCodes = [
                VerificationBody.SNAAttemptError(
                    attemptSid: try sid(flow.id, prefix: "VL"), code: Self.snaErrorCode(flow.carrierCheck))
            ]
        }
        return try TwilioJSON.response(body)
    }

    /// Twilio's SNA error code for where a carrier check stands: 60519 result pending, 60500 number mismatch, 60510
    /// SNA error (the authorization step failed), 60511 downstream error (the operator timed out or failed).
    static func snaErrorCode(_ status: CarrierCheckStatus?) -> Int {
        switch status {
        case .notVerified?: 60500
        case .authorizationFailed?: 60510
        case .timedOut?, .unavailable?: 60511
        case .pending?, .checking?, .verified?, nil: 60519
        }
    }

    /// A pending SNA verification's fields (a `VE…` SID over the flow's id).
    private func snaFields(_ flow: PossessionRecord, service: TwilioServiceRecord, account: TwilioAccount) throws
        -> VerificationBody
    {
        let sid = try sid(flow.id, prefix: "VE")
        return VerificationBody(
            sid: sid, serviceSid: service.sid, accountSid: account.sid, to: flow.phone ?? "", channel: "sna",
            status: VerificationStatus.pending.rawValue, valid: false, dateCreated: flow.createdAt,
            dateUpdated: flow.completedAt ?? flow.createdAt,
            url: "\(baseURL)/v2/Services/\(service.sid)/Verifications/\(sid)")
    }

    // MARK: - Mapping

    /// The account and the service the path names (20404 when the project has no such service).
    private func scope(_ context: VerityRequestContext) async throws -> (TwilioAccount, TwilioServiceRecord) {
        let account = try TwilioAccount(context)
        return (account, try await services.service(try context.parameters.require("serviceSid"), in: account.project))
    }

    /// The Verity id of the verification the path names; a malformed `VE…` is simply not found.
    private func verityId(_ context: VerityRequestContext) throws -> String {
        guard let id = TwilioSID.verityId(try context.parameters.require("sid"), prefix: "VE", idPrefix: "ver") else {
            throw VerityError(.verificationNotFound)
        }
        return id
    }

    private func sid(_ record: VerificationRecord) throws -> String {
        try sid(record.id, prefix: "VE")
    }

    private func sid(_ id: String, prefix: String) throws -> String {
        guard let sid = TwilioSID.sid(prefix, verityId: id) else {
            throw VerityError(.internalError, "A Verity id has no Twilio SID.")
        }
        return sid
    }

    /// Parameters of features Verity does not have, refused (400 60204) rather than ignored: a custom code would not be
    /// the one sent, and a PSD2 `Amount`/`Payee` would not be bound to the code as the payer was promised.
    private static func refuseUnsupported(_ form: TwilioForm, _ names: String...) throws {
        for name in names where form.string(name) != nil {
            throw TwilioError(code: 60204, message: "Service does not support this feature: \(name)", status: 400)
        }
    }

    /// Twilio's channel names for codes: `call` is Verity's `voice`; `sna` is the carrier check (``createSNA``);
    /// `auto` is refused rather than silently rerouted.
    static func channel(_ name: String) throws -> Channel {
        switch name {
        case "sms": .sms
        case "email": .email
        case "call": .voice
        case "whatsapp": .whatsapp
        default: throw TwilioError.invalidParameter("Channel", "Verity sends codes by sms, call, whatsapp and email")
        }
    }

    /// The name Twilio gives a channel.
    static func twilioName(_ channel: Channel) -> String {
        channel == .voice ? "call" : channel.rawValue
    }

    private func body(_ record: VerificationRecord, service: TwilioServiceRecord, account: TwilioAccount, now: Date)
        async throws -> VerificationBody
    {
        var body = try fields(record, status: record.status(at: now), service: service, account: account)
        body.sendCodeAttempts = try await verifications.sends(of: record).map { send in
            VerificationBody.SendAttempt(
                time: send.at, channel: Self.twilioName(send.channel ?? record.channel).uppercased(),
                attemptSid: Nullable(TwilioSID.sid("VL", verityId: send.messageId)))
        }
        return body
    }

    /// The resource's fields that need no further query (all but the send attempts).
    private func fields(
        _ record: VerificationRecord, status: VerificationStatus, service: TwilioServiceRecord, account: TwilioAccount
    ) throws -> VerificationBody {
        let sid = try sid(record)
        return VerificationBody(
            sid: sid, serviceSid: service.sid, accountSid: account.sid, to: record.destination,
            channel: Self.twilioName(record.channel), status: status.rawValue, valid: status == .approved,
            dateCreated: record.createdAt, dateUpdated: record.updatedAt,
            url: "\(baseURL)/v2/Services/\(service.sid)/Verifications/\(sid)")
    }

    // MARK: - Wire shapes

    /// A Verification resource, or (with `check`) a VerificationCheck: the same fields less the send attempts,
    /// `lookup`, `sna` and `url`, plus `sna_attempts_error_codes`. A nil field is left out.
    struct VerificationBody: Encodable {
        var sid: String
        var serviceSid: String
        var accountSid: String
        var to: String
        var channel: String
        var status: String
        var valid: Bool
        var lookup: [String: String]? = [:]
        var amount = Nullable<String>.null
        var payee = Nullable<String>.null
        var sendCodeAttempts: [SendAttempt]?
        var snaAttemptsErrorCodes: [SNAAttemptError]?
        var dateCreated: Date
        var dateUpdated: Date
        var sna: Nullable<SNA>? = .null
        var url: String?

        /// Where the device goes for Silent Network Auth.
        struct SNA: Encodable {
            var url: String
        }

        /// Why an SNA verification is not approved yet.
        struct SNAAttemptError: Encodable {
            var attemptSid: String
            var code: Int
        }

        struct SendAttempt: Encodable {
            var time: Date
            var channel: String
            var attemptSid: Nullable<String>
        }

        /// The VerificationCheck of the same verification.
        var check: VerificationBody {
            var check = self
            (check.lookup, check.sendCodeAttempts, check.sna, check.url) = (nil, nil, nil, nil)
            check.snaAttemptsErrorCodes = []
            return check
        }
    }
}
