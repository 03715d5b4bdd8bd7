import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// The stage of an SMTP conversation, named in failure reasons so an operator knows where it broke.
enum SMTPStep: String, Sendable {
    case connect = "connect"
    case greeting = "greeting"
    case ehlo = "EHLO"
    /// The second EHLO, the first exchange over TLS: handshake failures surface here.
    case ehloAfterStartTLS = "EHLO after STARTTLS"
    case startTLS = "STARTTLS"
    case auth = "AUTH"
    case mailFrom = "MAIL FROM"
    case rcptTo = "RCPT TO"
    case data = "DATA"
    case message = "end of DATA"
    case quit = "QUIT"
}
