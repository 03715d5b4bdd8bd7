import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// Providers' delivery-status callbacks, in their own wire formats: no API key, each request is authenticated by the
/// provider's signature, which ``DeliveryStatusReceiver`` checks.
///
/// - `GET /v1/delivery-status/whatsapp-cloud`: Meta's subscription check (`hub.mode`, `hub.verify_token`,
///   `hub.challenge`), answered with the challenge as text.
/// - `POST /v1/delivery-status/whatsapp-cloud`: Meta's webhook (JSON, `X-Hub-Signature-256`).
/// - `POST /v1/delivery-status/twilio`: Twilio's `StatusCallback` (form-encoded, `X-Twilio-Signature`).
struct DeliveryStatusController {
    let receiver: DeliveryStatusReceiver
    /// The URL Twilio posts to, as it signs it: the public URL, not the one a proxy forwards.
    let publicURL: String

    static let path = "v1/delivery-status"
    /// Meta batches up to 1000 status updates in one notification, far past the API's JSON body limit.
    static let metaBodyLimit = 3 * 1024 * 1024
    /// Twilio's status callback is one message's or call's parameters: a few hundred bytes.
    static let twilioBodyLimit = 64 * 1024

    func addRoutes(to router: Router<VerityRequestContext>) {
        let group = router.group(RouterPath(Self.path))
        group.get("whatsapp-cloud", use: metaSubscription)
        group.post("whatsapp-cloud", use: meta)
        group.post("twilio", use: twilio)
    }

    @Sendable func metaSubscription(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let challenge = try receiver.metaSubscriptionChallenge(
            mode: query.get("hub.mode"), verifyToken: query.get("hub.verify_token"),
            challenge: query.get("hub.challenge"))
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: challenge)))
    }

    /// Nothing is read from an unconfigured or unsigned callback (the receiver refuses it first).
    @Sendable func meta(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let signature = HTTPField.Name("X-Hub-Signature-256").flatMap { request.headers[$0] }
        _ = try receiver.metaSecret(signature: signature)
        let body = try await request.collectBody(upTo: Self.metaBodyLimit)
        try await receiver.receiveMeta(body: Array(body.readableBytesView), signature: signature)
        return Response(status: .ok)
    }

    @Sendable func twilio(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let signature = HTTPField.Name("X-Twilio-Signature").flatMap { request.headers[$0] }
        _ = try receiver.twilioToken(signature: signature)
        let body = try await request.collectBody(upTo: Self.twilioBodyLimit)
        guard let parameters = URLEncodedForm.validPairs(Substring(String(buffer: body))) else {
            throw VerityError(.invalidRequest, "The body is not form-encoded.")
        }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        try await receiver.receiveTwilio(
            url: "\(publicURL)/\(Self.path)/twilio\(query)", parameters: parameters, signature: signature)
        return Response(status: .ok)
    }
}
