import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// An aggregator on loopback that speaks CAMARA Number Verification v1 and the OpenID Connect authorization-code flow
/// in front of it: `GET /authorize` (the operator recognising the device and redirecting with a code), `POST /token`
/// (`client_secret_basic`, PKCE S256, single-use codes) and `POST /number-verification/v1/verify`.
///
/// The device it recognises holds ``devicePhoneNumber``; a script makes it deny the authorization, refuse the code,
/// answer slowly or answer an error, as real operators do. It records every request for the tests to read.
final class CamaraStandIn: Sendable {
    static let clientId = "verity-client"
    static let clientSecret = "standin-secret-4711"

    /// What the stand-in does this time.
    struct Script: Sendable {
        /// The number of the SIM behind the data session.
        var devicePhoneNumber = "+14155550199"
        /// The operator's error at the authorization step (`access_denied`, `consent_required`…), instead of a code.
        var authorizationError: String?
        /// The token endpoint refuses every code (`invalid_grant`).
        var refuseCode = false
        /// `/verify` waits this long before it answers.
        var verifyDelay: Duration?
        /// `/verify` answers this status and CAMARA error code instead of a result.
        var verifyError: (status: Int, code: String)?
    }

    /// One request the stand-in received.
    struct Received: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        /// By lowercase name.
        var headers: [String: String]
        var body: [UInt8]
    }

    private struct Grant {
        var challenge: String
        var redirectURI: String
    }

    private let state = NIOLockedValueBox<
        (script: Script, received: [Received], grants: [String: Grant], tokens: Set<String>)
    >(
        (Script(), [], [:], []))

    var script: Script {
        get { state.withLockedValue { $0.script } }
        set { state.withLockedValue { $0.script = newValue } }
    }

    var received: [Received] { state.withLockedValue { $0.received } }

    /// The `/verify` requests, as they came.
    var verifyRequests: [Received] { received.filter { $0.path.hasSuffix("/verify") } }

    /// Runs the stand-in around `body`, which gets its base URL (`http://127.0.0.1:<port>`).
    func run(_ body: (_ baseURL: String) async throws -> Void) async throws {
        let router = Router()
        router.get("authorize") { request, _ in try await self.authorize(request) }
        router.post("token") { request, _ in try await self.token(request) }
        router.post("number-verification/v1/verify") { request, _ in try await self.verify(request) }
        try await withLoopbackServer(router: router) { port in try await body("http://127.0.0.1:\(port)") }
    }

    /// The settings a project uses to reach this stand-in at `baseURL`.
    static func settings(baseURL: String, format: CarrierCheckSettings.NumberFormat = .hashed, timeout: Int = 5)
        -> CarrierCheckSettings
    {
        var settings = CarrierCheckSettings()
        settings.enabled = true
        settings.authorizationURL = "\(baseURL)/authorize"
        settings.tokenURL = "\(baseURL)/token"
        settings.apiURL = "\(baseURL)/number-verification/v1"
        settings.clientId = clientId
        settings.clientSecret = clientSecret
        settings.numberFormat = format
        settings.timeout = timeout
        return settings
    }

    // MARK: - Endpoints

    private func record(_ request: Request) async throws -> Received {
        let bytes = try await request.body.collect(upTo: 1 << 16)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        // The query is application/x-www-form-urlencoded (RFC 6749 §4.1.1): `+` is a space.
        var query: [String: String] = [:]
        for (name, value) in decodeForm(request.uri.query ?? "") ?? [] { query[name] = value }
        let received = Received(
            method: request.method.rawValue, path: request.uri.path, query: query, headers: headers,
            body: Array(bytes.readableBytesView))
        state.withLockedValue { $0.received.append(received) }
        return received
    }

    private func authorize(_ request: Request) async throws -> Response {
        let received = try await record(request)
        let query = received.query
        guard query["response_type"] == "code", query["client_id"] == Self.clientId,
            let redirect = query["redirect_uri"], let state = query["state"], let challenge = query["code_challenge"],
            query["code_challenge_method"] == "S256", query["scope"]?.split(separator: " ").contains("openid") == true
        else { return Self.json(.badRequest, #"{"error":"invalid_request"}"#) }
        LeakWatch.secret(state)
        var location = URLComponents(string: redirect)
        if let error = script.authorizationError {
            location?.queryItems = [
                URLQueryItem(name: "error", value: error), URLQueryItem(name: "state", value: state),
            ]
        } else {
            let code = "code-" + UUID().uuidString
            LeakWatch.secret(code)
            self.state.withLockedValue { $0.grants[code] = Grant(challenge: challenge, redirectURI: redirect) }
            location?.queryItems = [URLQueryItem(name: "code", value: code), URLQueryItem(name: "state", value: state)]
        }
        var headers = HTTPFields()
        headers[.location] = location?.string ?? redirect
        return Response(status: .found, headers: headers)
    }

    private func token(_ request: Request) async throws -> Response {
        let received = try await record(request)
        let basic = "Basic " + Data("\(Self.clientId):\(Self.clientSecret)".utf8).base64EncodedString()
        guard received.headers["authorization"] == basic else {
            return Self.json(.unauthorized, #"{"error":"invalid_client"}"#)
        }
        let form = Dictionary(
            (decodeForm(String(decoding: received.body, as: UTF8.self)) ?? []).map { ($0.name, $0.value) },
            uniquingKeysWith: { first, _ in first })
        // A code works once, for the redirect URI and PKCE challenge it was issued with.
        let grant = state.withLockedValue { $0.grants.removeValue(forKey: form["code"] ?? "") }
        guard form["grant_type"] == "authorization_code", !script.refuseCode, let grant,
            form["redirect_uri"] == grant.redirectURI, let verifier = form["code_verifier"],
            Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))) == grant.challenge
        else { return Self.json(.badRequest, #"{"error":"invalid_grant"}"#) }
        let token = "at-" + UUID().uuidString
        LeakWatch.secret(token)
        state.withLockedValue { _ = $0.tokens.insert(token) }
        return Self.json(.ok, #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":300}"#)
    }

    private func verify(_ request: Request) async throws -> Response {
        let received = try await record(request)
        let script = self.script
        if let delay = script.verifyDelay { try await Task.sleep(for: delay) }
        let token = received.headers["authorization"].map { String($0.dropFirst("Bearer ".count)) } ?? ""
        // A token is single use, as Number Verification's security requirements say.
        guard state.withLockedValue({ $0.tokens.remove(token) }) != nil else {
            return Self.error(401, "UNAUTHENTICATED")
        }
        if let failure = script.verifyError { return Self.error(failure.status, failure.code) }
        guard let body = try? JSONSerialization.jsonObject(with: Data(received.body)) as? [String: String],
            body.count == 1
        else { return Self.error(400, "INVALID_ARGUMENT") }
        let device = script.devicePhoneNumber
        let hashed = Hex.encode(SHA256.hash(data: Data(device.utf8)))
        let verified = body["phoneNumber"].map { $0 == device } ?? body["hashedPhoneNumber"].map { $0 == hashed }
        guard let verified else { return Self.error(400, "INVALID_ARGUMENT") }
        return Self.json(.ok, #"{"devicePhoneNumberVerified":\#(verified)}"#)
    }

    private static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private static func error(_ status: Int, _ code: String) -> Response {
        json(.init(code: status), #"{"status":\#(status),"code":"\#(code)","message":"stand-in"}"#)
    }
}
