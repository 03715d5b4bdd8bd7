import Foundation
import Hummingbird
import NIOCore

/// The operational endpoints: `/health`, `/metrics` and `/openapi.json`.
struct ServiceController {
    let metrics: VerityMetrics

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

    @Sendable func openAPI(_ request: Request, context: VerityRequestContext) throws -> Response {
        guard let document = Self.openAPIDocument else {
            throw VerityError(
                .notFound,
                "This build has no OpenAPI document: keep the `verity_VerityServer.resources` folder beside the "
                    + "`verity` binary when copying it.")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: document))
    }

    /// The committed OpenAPI document, read once, when first asked for: finding a resource bundle costs a start-up
    /// a third of its time (Foundation's `Bundle` lists the executable's folder), and a binary copied without its
    /// bundle still starts (SwiftPM's `Bundle.module` would stop the process instead).
    static let openAPIDocument: ByteBuffer? = {
        for url in openAPIDocumentCandidates() {
            if let data = try? Data(contentsOf: url) { return ByteBuffer(bytes: data) }
        }
        return nil
    }()

    /// Where the document may be: the resource bundle beside the executable (as SwiftPM builds and installs it),
    /// then the source tree this binary was built from.
    private static func openAPIDocumentCandidates() -> [URL] {
        let bundle = "verity_VerityServer.resources/openapi.json"
        #if os(Linux)
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return [
            executable.deletingLastPathComponent().appendingPathComponent(bundle),
            source.appendingPathComponent("Resources/openapi.json"),
        ]
    }
}
