import Foundation
import Hummingbird
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

@Suite("OpenAPI document")
struct OpenAPITests {
    /// One HTTP operation: an OpenAPI path template (`/v1/verifications/{id}`) and a lowercased method.
    struct Operation: Hashable, CustomStringConvertible {
        var path: String
        var method: String

        var description: String { "\(method.uppercased()) \(path)" }
    }

    static let httpMethods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    @Test("every route is in the OpenAPI document")
    func routesMatchDocument() async throws {
        let configuration = ServerConfiguration()
        var deps = AppDependencies()
        deps.database = .sqliteMemory
        deps.masterKey = try MasterKey(bytes: Array(repeating: 7, count: 32))
        let verity = try await Verity.open(configuration, dependencies: deps)
        let router: Router<VerityRequestContext>
        do {
            router = try buildRouter(configuration, verity: verity)
        } catch {
            try? await verity.database.close()
            throw error
        }
        try await verity.database.close()

        let allRouted = Set(
            router.routes.map {
                Operation(path: Self.openAPIPath($0.path.description), method: $0.method.rawValue.lowercased())
            })
        // The Twilio Verify face speaks Twilio's protocol, which Twilio's own OpenAPI document (twilio_verify_v2.json)
        // and the README describe; only routes under its configured prefix are left out, and there must be some.
        let twilioPrefix = try #require(configuration.twilioVerifyPrefix) + "/v2/"
        let twilioRoutes = allRouted.filter { $0.path.hasPrefix(twilioPrefix) }
        #expect(!twilioRoutes.isEmpty)
        // So does the Firebase face, whose routes name Google's hosts as the emulator's do.
        let firebaseHosts = [
            "/identitytoolkit.googleapis.com/", "/www.googleapis.com/", "/securetoken.googleapis.com/", "/emulator/",
        ]
        let firebaseRoutes = allRouted.filter { route in firebaseHosts.contains { route.path.hasPrefix($0) } }
        #expect(!firebaseRoutes.isEmpty)
        // So do providers' delivery-status callbacks, in Meta's and Twilio's formats (the README lists them).
        let statusRoutes = allRouted.filter { $0.path.hasPrefix("/v1/delivery-status/") }
        #expect(!statusRoutes.isEmpty)
        // So does the Descope face, under its prefix: Descope's protocol, which the README's routes table lists.
        let descopePrefix = try #require(configuration.descopePrefix) + "/"
        let descopeRoutes = allRouted.filter { $0.path.hasPrefix(descopePrefix) }
        #expect(!descopeRoutes.isEmpty)
        // So does the operators' console: HTML pages for a browser (the README's *Console* section lists them).
        let consoleRoutes = allRouted.filter { $0.path == "/console" || $0.path.hasPrefix("/console/") }
        #expect(!consoleRoutes.isEmpty)
        let routed = allRouted.subtracting(twilioRoutes).subtracting(firebaseRoutes).subtracting(statusRoutes)
            .subtracting(descopeRoutes).subtracting(consoleRoutes)
        let documented = try Self.documentedOperations(try Self.servedDocument())
        #expect(!routed.isEmpty)

        for operation in routed.sorted(by: { $0.description < $1.description }) {
            #expect(documented.contains(operation), "\(operation) is routed but not in openapi.json")
        }
        for operation in documented.sorted(by: { $0.description < $1.description }) {
            #expect(routed.contains(operation), "\(operation) is in openapi.json but not routed")
        }
    }

    @Test("the served document is the committed file")
    func servedDocumentIsCommitted() throws {
        let served = try #require(ServiceController.openAPIDocument)
        let committed = try Data(contentsOf: Self.committedDocumentURL)
        #expect(Data(served.readableBytesView) == committed)

        let document = try Self.servedDocument()
        let version = try #require(document["openapi"] as? String)
        #expect(version.hasPrefix("3.1"))
        let info = try #require(document["info"] as? [String: Any])
        #expect(info["version"] as? String == VerityRelease.version)

        let components = try #require(document["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let problem = try #require(schemas["Problem"] as? [String: Any])
        let properties = try #require(problem["properties"] as? [String: Any])
        let code = try #require(properties["code"] as? [String: Any])
        let documentedCodes = Set(try #require(code["enum"] as? [String]))
        for errorCode in ErrorCode.allCases {
            #expect(documentedCodes.contains(errorCode.rawValue), "\(errorCode.rawValue) is missing from Problem.code")
        }
        #expect(documentedCodes == Set(ErrorCode.allCases.map(\.rawValue)))
    }

    @Test("every operation has a unique operationId and a summary")
    func operationsAreDescribed() throws {
        let document = try Self.servedDocument()
        let paths = try #require(document["paths"] as? [String: Any])
        var operationIds: [String] = []
        for (path, item) in paths {
            let item = try #require(item as? [String: Any], "\(path) is not an object")
            for (method, operation) in item where Self.httpMethods.contains(method) {
                let operation = try #require(operation as? [String: Any])
                let operationId = try #require(operation["operationId"] as? String, "\(method) \(path)")
                operationIds.append(operationId)
                #expect(operation["summary"] is String, "\(method) \(path) has no summary")
            }
        }
        #expect(Set(operationIds).count == operationIds.count)
    }

    // MARK: - Helpers

    /// `Sources/VerityServer/Resources/openapi.json` in the source tree.
    static let committedDocumentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Sources/VerityServer/Resources/openapi.json")

    /// The bundled document, decoded.
    static func servedDocument() throws -> [String: Any] {
        let buffer = try #require(ServiceController.openAPIDocument)
        let object = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        return try #require(object as? [String: Any])
    }

    /// Every (path, method) pair the document describes.
    static func documentedOperations(_ document: [String: Any]) throws -> Set<Operation> {
        let paths = try #require(document["paths"] as? [String: Any])
        var operations: Set<Operation> = []
        for (path, item) in paths {
            let item = try #require(item as? [String: Any], "\(path) is not an object")
            for method in item.keys where httpMethods.contains(method) {
                operations.insert(Operation(path: path, method: method))
            }
        }
        return operations
    }

    /// A router path (`/v1/verifications/:id` or `/v1/verifications/{id}`) in OpenAPI syntax.
    static func openAPIPath(_ routerPath: String) -> String {
        let segments = routerPath.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
        }
        return "/" + segments.joined(separator: "/")
    }
}
