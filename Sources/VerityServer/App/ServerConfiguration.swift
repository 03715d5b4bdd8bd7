import Foundation
import Logging

/// Everything `verity serve` can be told. Defaults give an embedded SQLite server with console delivery.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Holds the SQLite file and the master key file.
    public var dataDirectory = "./verity-data"
    /// A `postgres://` URL; nil means the embedded SQLite file.
    public var databaseURL: String?
    /// PostgreSQL connections this node keeps at most: by default twice the cores plus two, the usual size for a
    /// pool whose queries are short (more connections than the database's cores can run only queue inside it).
    public var databasePoolSize = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
    public var logLevel: Logger.Level = .info
    /// The URL clients reach this server at (behind a proxy, its public address): the start of session token
    /// issuers and JWKS URLs. Nil means `http://host:port`.
    public var publicURL: String?
    /// The master key in base64; nil means the key file in the data directory.
    public var masterKey: String?
    public var sms: SMSDelivery = .console
    public var email: EmailDelivery = .console
    public var voice: VoiceDelivery = .console
    public var whatsapp: WhatsAppDelivery = .console
    /// APNs credentials; nil means pushes to iOS devices go to the console (devices can still pull challenges).
    public var apns: APNsConfiguration?
    /// FCM credentials; nil means pushes to Android devices go to the console.
    public var fcm: FCMConfiguration?
    public var rateLimits = RateLimits()
    public var outbox = OutboxConfiguration()
    /// Proxies whose forwarding header names the client (for per-client rate limits); nobody's by default.
    public var trustedProxies: [IPNetwork] = []
    /// The header those proxies write: `X-Forwarded-For` (default) or RFC 7239 `Forwarded`.
    public var trustedProxyHeader = "x-forwarded-for"
    /// Where tenants' webhooks may point: public addresses only unless `VERITY_WEBHOOK_ALLOW_PRIVATE=true`.
    public var webhookAddresses = OutboundAddressPolicy()
    /// The most long polls (`?wait=`) one node holds at once; past it they answer at once with the current state.
    public var maxLongPolls = 1000
    /// How long a client connection may stay open with no request in progress (a kept-alive connection between
    /// requests, or one that stops sending in the middle of one) before the server closes it; a request being
    /// answered, a long poll included, is never cut off. Longer than a load balancer's usual 60 s, so the balancer
    /// closes first and never reuses a connection the server is closing.
    public var idleTimeout: Duration = .seconds(75)
    /// How often housekeeping runs: unanswered challenges expire, spent tokens and long-ended sessions go.
    public var housekeepingInterval: Duration = .seconds(1)
    /// Where the Twilio Verify v2 face is mounted: `/twilio` serves `/twilio/v2/Services/…`, an empty string serves
    /// `/v2/…` at the root, nil turns the face off. Twilio clients use `<public URL><prefix>` as their Verify base URL.
    public var twilioVerifyPrefix: String? = "/twilio"
    /// Where the Descope auth face is mounted: `/descope` serves `/descope/v1/auth/…`, `/descope/v2/keys/…` and
    /// `/descope/v1/mgmt/…`; nil turns the face off. Descope SDKs take `<public URL><prefix>` as their base URL.
    /// Never the root, where `/v1/auth` is Verity's own.
    public var descopePrefix: String? = "/descope"
    /// Whether the Firebase Auth face answers at the root (`/identitytoolkit.googleapis.com/…`): only projects named
    /// for it (`verity admin project firebase`) are reachable through it. `VERITY_FIREBASE_FACE=false` turns it off.
    public var firebaseFace = true
    /// Whether the operators' web console is served under `/console` (on by default; `VERITY_CONSOLE=false` turns it
    /// off). Operators sign in with links from `verity admin console-login`.
    public var console = true
    /// Whether the Firebase face behaves as the emulator for development (`VERITY_FIREBASE_EMULATOR_ADMIN=true`): its
    /// admin routes accept firebase-admin's emulator credential (`Bearer owner`) for every Firebase-named project,
    /// and `/emulator/v1/projects/<id>/verificationCodes` lists the pending codes. Never on a shared server; off, the
    /// admin routes take the project's API key (`Bearer vk_…`) and the codes list does not exist.
    public var firebaseEmulatorAdmin = false
    /// The secrets that authenticate providers' delivery-status callbacks (`/v1/delivery-status/whatsapp-cloud` and
    /// `/v1/delivery-status/twilio`): `VERITY_WHATSAPP_APP_SECRET`, `VERITY_WHATSAPP_VERIFY_TOKEN`, and the Twilio
    /// senders' auth token.
    public var deliveryStatus = DeliveryStatusSettings()

    /// How SMS leaves the server.
    public enum SMSDelivery: Sendable {
        case console
        case twilio(TwilioConfiguration)
        case webhook(WebhookSMSConfiguration)
    }

    /// How email leaves the server.
    public enum EmailDelivery: Sendable {
        case console
        case smtp(SMTPConfiguration)
    }

    /// How calls that speak codes are placed.
    public enum VoiceDelivery: Sendable {
        case console
        /// Twilio's Programmable Voice Calls API.
        case twilio(TwilioConfiguration)
        /// A customer's own voice gateway behind a signed webhook.
        case webhook(WebhookVoiceConfiguration)
    }

    /// How WhatsApp codes leave the server.
    public enum WhatsAppDelivery: Sendable {
        case console
        /// Meta's WhatsApp Cloud API.
        case meta(MetaWhatsAppConfiguration)
        /// Twilio's Messaging API with `whatsapp:` addresses and a Content Template.
        case twilio(TwilioWhatsAppConfiguration)
    }

    public init() {}

    /// The auth token of the Twilio account the SMS, voice or WhatsApp sender uses, if one does.
    var twilioAuthToken: String? {
        var accounts: [TwilioConfiguration] = []
        if case .twilio(let account) = sms { accounts.append(account) }
        if case .twilio(let account) = voice { accounts.append(account) }
        if case .twilio(let whatsapp) = whatsapp { accounts.append(whatsapp.account) }
        return accounts.first?.authToken
    }

    /// Where Twilio posts the status of the messages and calls Verity asks it for: only when ``publicURL`` is set,
    /// since Twilio must reach it.
    var twilioStatusCallbackURL: String? {
        publicURL == nil ? nil : "\(resolvedPublicURL)/v1/delivery-status/twilio"
    }

    /// ``publicURL`` without a trailing slash, or `http://host:port`.
    public var resolvedPublicURL: String {
        var url = Substring(publicURL ?? "http://\(host):\(port)")
        while url.hasSuffix("/") { url = url.dropLast() }
        return String(url)
    }

    /// Where the data lives, from `databaseURL` and `dataDirectory`.
    public var databaseLocation: DatabaseLocation {
        get throws(ConfigurationError) {
            guard let url = databaseURL, !url.isEmpty else {
                return .sqliteFile(path: (dataDirectory as NSString).appendingPathComponent("verity.sqlite"))
            }
            if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
                return .postgres(url: url, maxConnections: databasePoolSize)
            }
            if url.hasPrefix("sqlite://") {
                return .sqliteFile(path: String(url.dropFirst("sqlite://".count)))
            }
            throw ConfigurationError("The database URL must start with postgres:// or sqlite://.")
        }
    }

    /// Creates the data directory (0700) if needed and loads or creates the master key.
    public func loadMasterKey() throws -> MasterKey {
        if let masterKey { return try MasterKey(base64: masterKey) }
        try ConfigurationError.createPrivateDirectory(dataDirectory, what: "the data directory")
        return try MasterKey.loadOrCreate(at: (dataDirectory as NSString).appendingPathComponent("master.key"))
    }

    /// Reads the `VERITY_*` environment variables over the defaults.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        func value(_ name: String) -> String? {
            environment["VERITY_\(name)"].flatMap { $0.isEmpty ? nil : $0 }
        }
        func flag(_ name: String) throws(ConfigurationError) -> Bool? {
            guard let text = value(name) else { return nil }
            guard let flag = Bool(text.lowercased()) else {
                throw ConfigurationError("VERITY_\(name) must be true or false.")
            }
            return flag
        }
        func required(_ name: String, for feature: String) throws(ConfigurationError) -> String {
            guard let found = value(name) else {
                throw ConfigurationError("VERITY_\(name) is required when \(feature).")
            }
            return found
        }
        if let host = value("HOST") { self.host = host }
        if let port = value("PORT") {
            guard let number = Int(port), (0...65_535).contains(number) else {
                throw ConfigurationError("VERITY_PORT must be a port number.")
            }
            self.port = number
        }
        if let dataDirectory = value("DATA_DIR") { self.dataDirectory = dataDirectory }
        if let databaseURL = value("DATABASE_URL") { self.databaseURL = databaseURL }
        if let level = value("LOG_LEVEL") {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ConfigurationError("VERITY_LOG_LEVEL must be one of trace, debug, info, notice, warning, error.")
            }
            logLevel = parsed
        }
        if let masterKey = value("MASTER_KEY") { self.masterKey = masterKey }
        if let rate = value("RATE_LIMIT_DESTINATION") { rateLimits.perDestination = try RateLimitPolicy(parsing: rate) }
        if let rate = value("RATE_LIMIT_NUMBER_BLOCK") {
            rateLimits.perNumberBlock = try RateLimitPolicy(parsing: rate)
        }
        if let rate = value("RATE_LIMIT_PROJECT") { rateLimits.perProject = try RateLimitPolicy(parsing: rate) }
        if let rate = value("RATE_LIMIT_CLIENT_IP") { rateLimits.perClientAddress = try RateLimitPolicy(parsing: rate) }
        if let rate = value("RATE_LIMIT_LOGIN_ID") { rateLimits.perLoginId = try RateLimitPolicy(parsing: rate) }
        if let text = value("TRUSTED_PROXIES") {
            var networks: [IPNetwork] = []
            for entry in text.split(separator: ",") {
                let trimmed = entry.trimmingCharacters(in: .whitespaces)
                guard let network = IPNetwork(trimmed) else {
                    throw ConfigurationError(
                        "VERITY_TRUSTED_PROXIES must be addresses or CIDR blocks separated by commas, such as "
                            + "10.0.0.0/8,127.0.0.1; '\(trimmed)' is neither.")
                }
                networks.append(network)
            }
            trustedProxies = networks
        }
        if let text = value("TRUSTED_PROXY_HEADER") {
            guard TrustedProxies.Header(rawValue: text.lowercased()) != nil else {
                throw ConfigurationError("VERITY_TRUSTED_PROXY_HEADER must be x-forwarded-for or forwarded.")
            }
            trustedProxyHeader = text.lowercased()
        }
        if let enabled = try flag("FIREBASE_FACE") { firebaseFace = enabled }
        if let enabled = try flag("CONSOLE") { console = enabled }
        if let enabled = try flag("FIREBASE_EMULATOR_ADMIN") { firebaseEmulatorAdmin = enabled }
        if let allow = try flag("WEBHOOK_ALLOW_PRIVATE") { webhookAddresses.allowPrivate = allow }
        if let text = value("DATABASE_POOL_SIZE") {
            guard let number = Int(text), (1...1_000).contains(number) else {
                throw ConfigurationError("VERITY_DATABASE_POOL_SIZE must be a whole number from 1 to 1000.")
            }
            databasePoolSize = number
        }
        if let text = value("IDLE_TIMEOUT") {
            guard let seconds = Int(text), (1...3_600).contains(seconds) else {
                throw ConfigurationError("VERITY_IDLE_TIMEOUT must be a whole number of seconds from 1 to 3600.")
            }
            idleTimeout = .seconds(seconds)
        }
        if let text = value("MAX_LONG_POLLS") {
            guard let number = Int(text), number >= 0 else {
                throw ConfigurationError("VERITY_MAX_LONG_POLLS must be a whole number, 0 or more.")
            }
            maxLongPolls = number
        }

        switch value("SMS_SENDER") ?? "console" {
        case "console": sms = .console
        case "twilio":
            let feature = "VERITY_SMS_SENDER is twilio"
            sms = .twilio(
                TwilioConfiguration(
                    accountSID: try required("TWILIO_ACCOUNT_SID", for: feature),
                    authToken: try required("TWILIO_AUTH_TOKEN", for: feature),
                    from: value("TWILIO_FROM"), messagingServiceSID: value("TWILIO_MESSAGING_SERVICE_SID"),
                    baseURL: value("TWILIO_BASE_URL") ?? "https://api.twilio.com"))
            if value("TWILIO_FROM") == nil && value("TWILIO_MESSAGING_SERVICE_SID") == nil {
                throw ConfigurationError(
                    "Set VERITY_TWILIO_FROM or VERITY_TWILIO_MESSAGING_SERVICE_SID when VERITY_SMS_SENDER is twilio.")
            }
        case "webhook":
            let feature = "VERITY_SMS_SENDER is webhook"
            sms = .webhook(
                WebhookSMSConfiguration(
                    url: try required("SMS_WEBHOOK_URL", for: feature),
                    secret: try required("SMS_WEBHOOK_SECRET", for: feature)))
        case let other:
            throw ConfigurationError("VERITY_SMS_SENDER '\(other)' is not one of console, twilio, webhook.")
        }

        try applyVoiceAndWhatsApp(value: value, required: required)
        if let secret = value("WHATSAPP_APP_SECRET") { deliveryStatus.metaAppSecret = secret }
        if let token = value("WHATSAPP_VERIFY_TOKEN") { deliveryStatus.metaVerifyToken = token }
        if let token = twilioAuthToken { deliveryStatus.twilioAuthToken = token }

        switch value("EMAIL_SENDER") ?? "console" {
        case "console": email = .console
        case "smtp":
            let feature = "VERITY_EMAIL_SENDER is smtp"
            let security: SMTPConfiguration.Security
            switch value("SMTP_SECURITY") ?? "starttls" {
            case "starttls": security = .startTLS
            case "tls": security = .tls
            case "none": security = .none
            case let other:
                throw ConfigurationError("VERITY_SMTP_SECURITY '\(other)' is not one of starttls, tls, none.")
            }
            var port: Int?
            if let text = value("SMTP_PORT") {
                guard let number = Int(text) else { throw ConfigurationError("VERITY_SMTP_PORT must be a number.") }
                port = number
            }
            let smtp = SMTPConfiguration(
                host: try required("SMTP_HOST", for: feature), port: port, username: value("SMTP_USERNAME"),
                password: value("SMTP_PASSWORD"), from: try required("SMTP_FROM", for: feature), security: security)
            email = .smtp(smtp)
        case let other:
            throw ConfigurationError("VERITY_EMAIL_SENDER '\(other)' is not one of console, smtp.")
        }

        if let url = value("PUBLIC_URL") {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil,
                parsed.query == nil
            else {
                throw ConfigurationError(
                    "VERITY_PUBLIC_URL must be an absolute http(s) URL, like https://verity.example.com.")
            }
            publicURL = url
        }
        if let prefix = value("TWILIO_VERIFY_PREFIX") {
            twilioVerifyPrefix = try Self.twilioVerifyPrefix(parsing: prefix)
        }
        if let prefix = value("DESCOPE_PREFIX") {
            descopePrefix = try Self.descopePrefix(parsing: prefix)
        }
        if let keyFile = value("APNS_KEY_FILE") {
            let feature = "VERITY_APNS_KEY_FILE is set"
            let environmentName = value("APNS_ENVIRONMENT") ?? "production"
            guard let apnsEnvironment = APNsConfiguration.Environment(rawValue: environmentName) else {
                throw ConfigurationError(
                    "VERITY_APNS_ENVIRONMENT '\(environmentName)' is not one of production, sandbox.")
            }
            let configuration = APNsConfiguration(
                teamID: try required("APNS_TEAM_ID", for: feature), keyID: try required("APNS_KEY_ID", for: feature),
                privateKeyPEM: try Self.secretFile(keyFile, variable: "VERITY_APNS_KEY_FILE"),
                topic: try required("APNS_TOPIC", for: feature), environment: apnsEnvironment,
                baseURL: value("APNS_URL"))
            do {
                try configuration.validate()
            } catch {
                throw ConfigurationError("VERITY_APNS_KEY_FILE must hold an APNs .p8 key (a PEM P-256 private key).")
            }
            apns = configuration
        }
        if let accountFile = value("FCM_SERVICE_ACCOUNT_FILE") {
            var configuration = FCMConfiguration(
                serviceAccountJSON: try Self.secretFile(accountFile, variable: "VERITY_FCM_SERVICE_ACCOUNT_FILE"))
            if let url = value("FCM_URL") { configuration.baseURL = url }
            do {
                try configuration.validate()
            } catch {
                throw ConfigurationError(
                    "VERITY_FCM_SERVICE_ACCOUNT_FILE must be a Google service-account JSON key with project_id, "
                        + "client_email and private_key.")
            }
            fcm = configuration
        }
    }

    /// `VERITY_VOICE_SENDER` and `VERITY_WHATSAPP_SENDER` with their providers' settings. Twilio's account settings
    /// are the SMS sender's (`VERITY_TWILIO_ACCOUNT_SID`, …), each channel with a sender number of its own.
    private mutating func applyVoiceAndWhatsApp(
        value: (String) -> String?, required: (String, String) throws(ConfigurationError) -> String
    ) throws(ConfigurationError) {
        func twilioAccount(for feature: String, from: String?) throws(ConfigurationError) -> TwilioConfiguration {
            TwilioConfiguration(
                accountSID: try required("TWILIO_ACCOUNT_SID", feature),
                authToken: try required("TWILIO_AUTH_TOKEN", feature), from: from,
                baseURL: value("TWILIO_BASE_URL") ?? "https://api.twilio.com")
        }
        switch value("VOICE_SENDER") ?? "console" {
        case "console": voice = .console
        case "twilio":
            let feature = "VERITY_VOICE_SENDER is twilio"
            voice = .twilio(
                try twilioAccount(for: feature, from: try required("TWILIO_VOICE_FROM", feature)))
        case "webhook":
            let feature = "VERITY_VOICE_SENDER is webhook"
            voice = .webhook(
                WebhookVoiceConfiguration(
                    url: try required("VOICE_WEBHOOK_URL", feature),
                    secret: try required("VOICE_WEBHOOK_SECRET", feature)))
        case let other:
            throw ConfigurationError("VERITY_VOICE_SENDER '\(other)' is not one of console, twilio, webhook.")
        }
        switch value("WHATSAPP_SENDER") ?? "console" {
        case "console": whatsapp = .console
        case "meta":
            let feature = "VERITY_WHATSAPP_SENDER is meta"
            var meta = MetaWhatsAppConfiguration(
                phoneNumberID: try required("WHATSAPP_PHONE_NUMBER_ID", feature),
                accessToken: try required("WHATSAPP_ACCESS_TOKEN", feature),
                templateName: try required("WHATSAPP_TEMPLATE", feature))
            if let version = value("WHATSAPP_API_VERSION") { meta.apiVersion = version }
            if let url = value("WHATSAPP_BASE_URL") { meta.baseURL = url }
            if let text = value("WHATSAPP_TEMPLATE_LANGUAGES") {
                meta.templateLanguages.merge(
                    try Self.languageMap(text, variable: "VERITY_WHATSAPP_TEMPLATE_LANGUAGES")
                ) { $1 }
            }
            whatsapp = .meta(meta)
        case "twilio":
            let feature = "VERITY_WHATSAPP_SENDER is twilio"
            var account = try twilioAccount(for: feature, from: value("TWILIO_WHATSAPP_FROM"))
            account.messagingServiceSID = value("TWILIO_WHATSAPP_MESSAGING_SERVICE_SID")
            if account.from == nil && account.messagingServiceSID == nil {
                throw ConfigurationError(
                    "Set VERITY_TWILIO_WHATSAPP_FROM or VERITY_TWILIO_WHATSAPP_MESSAGING_SERVICE_SID when "
                        + "VERITY_WHATSAPP_SENDER is twilio.")
            }
            var bySID: [String: String] = [:]
            if let text = value("TWILIO_WHATSAPP_CONTENT_SIDS") {
                bySID = try Self.languageMap(text, variable: "VERITY_TWILIO_WHATSAPP_CONTENT_SIDS")
            }
            whatsapp = .twilio(
                TwilioWhatsAppConfiguration(
                    account: account, contentSID: try required("TWILIO_WHATSAPP_CONTENT_SID", feature),
                    contentSIDsByLanguage: bySID))
        case let other:
            throw ConfigurationError("VERITY_WHATSAPP_SENDER '\(other)' is not one of console, meta, twilio.")
        }
    }

    /// `es:es_MX,pt:pt_PT`: a value for each message language.
    static func languageMap(_ text: String, variable: String) throws(ConfigurationError) -> [String: String] {
        var map: [String: String] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationError(
                    "\(variable) must be language:value pairs separated by commas, such as es:es_MX,pt:pt_PT.")
            }
            map[parts[0].lowercased()] = parts[1]
        }
        return map
    }

    /// `VERITY_TWILIO_VERIFY_PREFIX`: `off`, `/` (the root) or a path such as `/twilio`.
    static func twilioVerifyPrefix(parsing text: String) throws(ConfigurationError) -> String? {
        try facePrefix(parsing: text, variable: "VERITY_TWILIO_VERIFY_PREFIX", example: "/twilio")
    }

    /// `VERITY_DESCOPE_PREFIX`: `off` or a path such as `/descope`; not the root, where `/v1/auth` is Verity's own.
    static func descopePrefix(parsing text: String) throws(ConfigurationError) -> String? {
        let prefix = try facePrefix(parsing: text, variable: "VERITY_DESCOPE_PREFIX", example: "/descope")
        if prefix == "" {
            throw ConfigurationError(
                "VERITY_DESCOPE_PREFIX cannot be the root, where /v1/auth is Verity's own API; use a path such as /descope."
            )
        }
        return prefix
    }

    /// A face's mount point: `off`, `/` (the root, as an empty string) or a path of plain segments, none of them
    /// `v1` or `v2` (which would shadow the API).
    private static func facePrefix(parsing text: String, variable: String, example: String)
        throws(ConfigurationError) -> String?
    {
        if text == "off" { return nil }
        var path = Substring(text)
        while path.hasSuffix("/") { path = path.dropLast() }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard text.hasPrefix("/"),
            segments.allSatisfy({ segment in
                !segment.isEmpty && !segment.hasPrefix(":") && segment != "v1" && segment != "v2"
                    && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
            })
        else {
            throw ConfigurationError(
                "\(variable) must be off, / or a path such as \(example) (letters, digits, - _ .).")
        }
        return String(path)
    }

    /// Reads a credential file named by an environment variable.
    private static func secretFile(_ path: String, variable: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError("\(variable): cannot read \(path).")
        }
        return text
    }
}
