import Logging

/// The development sender: nothing leaves the machine. The message stays readable in the outbox
/// (`verity outbox list`: the text, or what a call would say); the log line says where to find it but never shows
/// the code.
public struct ConsoleSender: MessageSender {
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        logger.notice(
            "Console delivery: read it with `verity outbox list`",
            metadata: ["message": "\(message.id)", "channel": "\(message.channel.rawValue)"])
    }
}
