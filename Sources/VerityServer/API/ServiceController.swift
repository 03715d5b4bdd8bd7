import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The operational endpoints: `/health`, `/ready`, `/metrics` and `/openapi.json`.
struct ServiceController {
    let metrics: VerityMetrics
    let database: Database
    /// How long `/ready` waits for the database.
    var readyLimit: Duration = .seconds(2)

    func addRoutes(to router: Router<VerityRequestContext>) {
        router.get("health", use: health)
        router.get("ready", use: ready)
        router.get("metrics", use: prometheus)
        router.get("openapi.json", use: openAPI)
    }

    /// Answers from memory only: a load balancer may call it as often as it likes.
    @Sendable func health(_ request: Request, context: VerityRequestContext) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"ok"}"#)))
    }

    /// Whether this node can serve: its database answers a `SELECT 1` within ``readyLimit``. For a load balancer's
    /// or an orchestrator's readiness check, so that a node that lost its database gets no traffic (``health(_:context:)``
    /// stays the liveness check).
    @Sendable func ready(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let database = self.database
        let answered: Bool?
        do {
            answered = try await Self.result(within: readyLimit) {
                try await database.ping()
                return true
            }
        } catch {
            throw VerityError(.serviceUnavailable, "The database cannot be reached.")
        }
        guard answered != nil else {
            throw VerityError(
                .serviceUnavailable, "The database did not answer within \(readyLimit.components.seconds) seconds.")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"ready"}"#)))
    }

    /// What `body` returns, or nil when it has not returned after `limit`. A late `body` is cancelled but not waited
    /// for: a query on a connection that no longer answers may ignore cancellation until the socket times out.
    static func result<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        let pending = NIOLockedValueBox<CheckedContinuation<T?, any Error>?>(nil)
        let finish = { @Sendable (result: Result<T?, any Error>) in
            pending.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let timer = NIOLockedValueBox<Task<Void, Never>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0 = continuation }
            let work = Task {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
                timer.withLockedValue { $0?.cancel() }
            }
            timer.withLockedValue {
                $0 = Task {
                    try? await Task.sleep(for: limit)
                    finish(.success(nil))
                    work.cancel()
                }
            }
        }
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
