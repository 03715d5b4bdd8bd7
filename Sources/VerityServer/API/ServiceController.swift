import Foundation
import Hummingbird
import NIOCore

/// The operational endpoints: `/health`, `/metrics` and `/openapi.json`.
struct ServiceController {
    let metrics: VerityMetrics
    let openAPIDocument: ByteBuffer

    func addRoutes(to router: Router<VerityRequestContext>) {
        router.get("health", use: health)
        router.get("metrics", use: prometheus)
        router.get("openapi.json", use: openAPI)
    }

    /// Answers from memory only: a load balancer may call it as often as it likes.
    @Sendable func health(_ request: Request, context: VerityRequestContext) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"ok"}"#)))
    }

    @Sendable func prometheus(_ request: Request, context: VerityRequestContext) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
    }

    @Sendable func openAPI(_ request: Request, context: VerityRequestContext) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: openAPIDocument))
    }

    /// The committed OpenAPI document, bundled as a resource.
    static func loadOpenAPIDocument() throws -> ByteBuffer {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw ConfigurationError("The bundled OpenAPI document is missing from this build.")
        }
        return ByteBuffer(bytes: try Data(contentsOf: url))
    }
}
