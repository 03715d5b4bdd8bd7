/// What a face adds to a passkey ceremony besides the project: its own relying party, and the transaction it tracks the
/// ceremony by (a Twilio factor or challenge SID), which the ceremony's challenge is bound to.
struct PasskeyCeremonyContext: Sendable, Equatable {
    /// The relying party of this ceremony; nil: the project's.
    var settings: PasskeySettings?
    /// The face's id for this ceremony; an answer to the challenge finds it again through
    /// ``PasskeyService/transaction(answering:in:)``, and only that transaction may spend the challenge.
    var transaction: String?

    /// The project's relying party, no transaction: the native API's ceremonies.
    static let project = PasskeyCeremonyContext()

    /// A ceremony of `transaction` under the relying party `settings`.
    init(settings: PasskeySettings? = nil, transaction: String? = nil) {
        self.settings = settings
        self.transaction = transaction
    }
}
