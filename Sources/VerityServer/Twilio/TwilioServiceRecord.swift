import Foundation

/// A Twilio Verify service (`VA…`): a named set of verification settings inside one project.
///
/// Its verifications are the project's own, under Verity's rules; the service only keeps them apart from other
/// services' (their purpose names it) and chooses their code length.
struct TwilioServiceRecord: Sendable, Equatable {
    var sid: String
    var projectId: String
    var friendlyName: String
    /// Digits in a new code, 4 to 10.
    var codeLength: Int
    var push: Push
    var totp: TOTP
    /// The `Passkeys.*` settings its passkey factors start from.
    var passkeys = TwilioPasskeyConfig()
    var createdAt: Date
    var updatedAt: Date

    /// Push settings: the APNs and FCM credential SIDs a service names, echoed as Twilio does.
    struct Push: Sendable, Equatable {
        var includeDate = false
        var apnCredentialSid: String?
        var fcmCredentialSid: String?
    }

    /// Defaults of the service's TOTP factors (RFC 6238).
    struct TOTP: Sendable, Equatable {
        /// nil means the friendly name.
        var issuer: String?
        var timeStep = 30
        var codeLength = 6
        var skew = FactorDialect.twilio.defaultTOTPWindow
    }

    /// A service's own: Twilio's services have short names.
    static let friendlyNameLength = 1...32

    /// The purpose of this service's verifications.
    var verificationPurpose: VerificationPurpose { .twilioService(sid) }

    /// Applies the parameters of a create or an update, refusing the first one that is out of range. Parameters
    /// of features Verity does not have (lookup, PSD2, custom codes, WhatsApp, …) are ignored.
    mutating func apply(_ form: TwilioForm) throws {
        if let name = form.string("FriendlyName") {
            guard Self.friendlyNameLength.contains(name.unicodeScalars.count) else {
                throw TwilioError.invalidParameter("FriendlyName", "1 to 32 characters")
            }
            friendlyName = name
        }
        if let length = try form.integer("CodeLength", in: ProjectSettings.codeLengthRange) { codeLength = length }
        if let includeDate = try form.boolean("Push.IncludeDate") { push.includeDate = includeDate }
        if let sid = try Self.credentialSid(form, "Push.ApnCredentialSid") { push.apnCredentialSid = sid }
        if let sid = try Self.credentialSid(form, "Push.FcmCredentialSid") { push.fcmCredentialSid = sid }
        if let issuer = form.string("Totp.Issuer") {
            guard (1...64).contains(issuer.unicodeScalars.count) else {
                throw TwilioError.invalidParameter("Totp.Issuer", "1 to 64 characters")
            }
            totp.issuer = issuer
        }
        if let step = try form.integer("Totp.TimeStep", in: FactorService.totpTimeSteps) { totp.timeStep = step }
        if let length = try form.integer("Totp.CodeLength", in: 3...8) { totp.codeLength = length }
        if let skew = try form.integer("Totp.Skew", in: FactorDialect.twilio.totpWindows) { totp.skew = skew }
        try passkeys.apply(form)
    }

    private static func credentialSid(_ form: TwilioForm, _ name: String) throws -> String? {
        guard let sid = form.string(name) else { return nil }
        guard TwilioSID.isValid(sid, prefix: "CR") else { throw TwilioError.invalidParameter(name) }
        return sid
    }
}
