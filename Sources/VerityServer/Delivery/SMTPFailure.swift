import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Why an SMTP conversation failed, before it is turned into a ``DeliveryError``.
///
/// `detail` must never carry the password, the message body or the full recipient address:
/// it ends up in the outbox record and the logs.
struct SMTPFailure: Error, Sendable, Equatable {
    var step: SMTPStep
    var kind: DeliveryError.Kind
    var detail: String

    var deliveryError: DeliveryError {
        DeliveryError(kind, "SMTP \(step.rawValue): \(detail)")
    }
}
