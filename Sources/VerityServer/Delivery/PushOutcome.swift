import Logging
import VerityCore

/// What a push platform's answer means for the notification.
enum PushOutcome: Equatable {
    case delivered
    /// The device token is dead.
    case tokenInvalid(String)
    /// The platform refused the server's own credential (an APNs provider token, an FCM access token).
    case credentialRejected(String)
    case failed(DeliveryError.Kind, String)

    /// Logs the outcome and throws what it means: ``PushTokenInvalid`` for a dead token, a transient
    /// ``DeliveryError`` after `dropCredential` for a refused credential (the retry gets a new one), the failure's
    /// own ``DeliveryError`` otherwise.
    ///
    /// - Parameter provider: `apns` or `fcm`, the first word of each log line.
    func settle(
        provider: String, logger: Logger, metadata: Logger.Metadata, dropCredential: () async -> Void
    ) async throws {
        switch self {
        case .delivered:
            logger.debug("\(provider) accepted notification", metadata: metadata)
        case .tokenInvalid(let description):
            logger.debug("\(provider) reports the device token is invalid", metadata: metadata)
            throw PushTokenInvalid(reason: description)
        case .credentialRejected(let description):
            logger.debug("\(provider) rejected the server's credential; a new one will be obtained", metadata: metadata)
            await dropCredential()
            throw DeliveryError(.transient, description)
        case .failed(let kind, let description):
            logger.debug("\(provider) refused notification", metadata: metadata)
            throw DeliveryError(kind, description)
        }
    }
}
