import VerityCore

/// One rendered message, ready for a carrier, a mail server, a voice provider or WhatsApp.
public struct OutgoingMessage: Sendable, Equatable {
    /// The outbox message id (`msg_…`); stable across retries, so senders can use it as an idempotency key.
    public var id: String
    public var channel: Channel
    /// An E.164 number for SMS, calls and WhatsApp, an address for email.
    public var to: String
    /// The subject line (email only).
    public var subject: String?
    /// The full text, code included; for a call, the lines it says, one per line.
    public var body: String
    /// The code alone, for providers that put it into a template of their own (WhatsApp's authentication templates).
    public var code: String?
    /// The language the message is written in (`en`, `es`, `fr`, `de`, `pt`, `ja`).
    public var language: String
    /// What a call says (voice only).
    public var speech: Speech?

    /// What a call says: each line in turn, with a pause between them, in a text-to-speech voice of `language`.
    public struct Speech: Sendable, Equatable {
        /// The voice's language as a BCP 47 tag with a region, such as `en-US` (Twilio's `<Say language>`).
        public var language: String
        /// The lines said in turn: the code digit by digit, then, after a pause, a line that repeats it.
        public var lines: [String]

        public init(language: String, lines: [String]) {
            self.language = language
            self.lines = lines
        }
    }

    public init(
        id: String, channel: Channel, to: String, subject: String? = nil, body: String, code: String? = nil,
        language: String = "en", speech: Speech? = nil
    ) {
        self.id = id
        self.channel = channel
        self.to = to
        self.subject = subject
        self.body = body
        self.code = code
        self.language = language
        self.speech = speech
    }
}
