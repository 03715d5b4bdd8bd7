import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import VerityCore

/// Verity's client of CAMARA Number Verification v1 (`POST /verify`) and the OpenID Connect authorization-code flow
/// in front of it, as the CAMARA Security and Interoperability Profile describes it.
///
/// The app opens ``authorizationURL(_:state:)`` over mobile data; the operator recognises the data session, and
/// redirects to Verity's callback with a code. ``check(_:code:state:phoneNumber:correlator:)`` exchanges the code at
/// the token endpoint (PKCE, `client_secret_basic`) and asks `/verify` about the flow's number. Every endpoint is
/// called only while it resolves to public addresses (``OutboundAddressPolicy``), through a client that never follows
/// a redirect. Nothing it logs holds a code, a token or a number.
struct CamaraNumberVerification: Sendable {
    let httpClient: HTTPClient
    let addresses: OutboundAddressPolicy
    /// Verity's callback, the `redirect_uri` of every authorization request.
    let redirectURI: String
    /// Derives each flow's PKCE verifier from its state, so the verifier need not be stored.
    let pkceKey: SymmetricKey
    let logger: Logger

    /// The callback's path on Verity's public URL.
    static let callbackPath = "/v1/carrier-check/callback"

    /// The front-channel URL for a flow whose single-use `state` is given.
    func authorizationURL(_ settings: CarrierCheckSettings, state: String) -> String {
        let challenge = Base64URL.encode(SHA256.hash(data: Data(verifier(state: state).utf8)))
        let query = FormEncoding.encode([
            ("response_type", "code"), ("client_id", settings.clientId), ("redirect_uri", redirectURI),
            ("scope", settings.scope), ("state", state), ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ])
        return "\(settings.authorizationURL)?\(query)"
    }

    /// The operator's answer about `phoneNumber` (E.164) for the device that brought `code`, within the settings'
    /// timeout: `verified`, `notVerified`, `timedOut`, `authorizationFailed` or `unavailable`.
    func check(_ settings: CarrierCheckSettings, code: String, state: String, phoneNumber: String, correlator: String)
        async -> CarrierCheckStatus
    {
        let timeout = Duration.seconds(settings.timeout)
        return await withTaskGroup(of: CarrierCheckStatus?.self) { group in
            group.addTask {
                await exchangeAndVerify(
                    settings, code: code, state: state, phoneNumber: phoneNumber, correlator: correlator,
                    timeout: timeout)
            }
            group.addTask {
                do { try await Task.sleep(for: timeout) } catch { return nil }
                return .timedOut
            }
            defer { group.cancelAll() }
            return await group.next().flatMap { $0 } ?? .unavailable
        }
    }

    private func exchangeAndVerify(
        _ settings: CarrierCheckSettings, code: String, state: String, phoneNumber: String, correlator: String,
        timeout: Duration
    ) async -> CarrierCheckStatus {
        do {
            guard let accessToken = try await token(settings, code: code, state: state, timeout: timeout) else {
                return .authorizationFailed
            }
            return try await verify(
                settings, accessToken: accessToken, phoneNumber: phoneNumber, correlator: correlator,
                timeout: timeout)
        } catch {
            if Task.isCancelled { return .timedOut }
            logger.notice("The carrier check could not reach the operator", metadata: ["error": "\(error)"])
            return .unavailable
        }
    }

    /// The access token for `code`; nil when the token endpoint refused the code or the client (4xx).
    private func token(_ settings: CarrierCheckSettings, code: String, state: String, timeout: Duration)
        async throws -> String?
    {
        try await addresses.requirePublic(settings.tokenURL)
        var request = HTTPClientRequest(url: settings.tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        // RFC 6749 §2.3.1: each part form-encoded, then joined and base64-encoded.
        let credentials =
            "\(FormEncoding.encode(settings.clientId)):\(FormEncoding.encode(settings.clientSecret ?? ""))"
        request.headers.add(name: "Authorization", value: "Basic \(Data(credentials.utf8).base64EncodedString())")
        let body = FormEncoding.encode([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", verifier(state: state)),
        ])
        request.body = .bytes(ByteBuffer(string: body))
        let (response, answer) = try await ProviderHTTP.exchange(
            request, provider: "carrier token endpoint", timeout: timeout, httpClient: httpClient, logger: logger)
        let status = Int(response.status.code)
        if (400..<500).contains(status) {
            let error =
                (try? JSONDecoder().decode(OAuthError.self, from: Data(answer.readableBytesView)))?.error ?? "unknown"
            logger.info(
                "The carrier's token endpoint refused the code",
                metadata: ["http.status": "\(status)", "error": "\(error.prefix(64))"])
            return nil
        }
        guard (200..<300).contains(status) else {
            throw DeliveryError(.transient, "carrier token endpoint answered \(status)")
        }
        guard
            let token = try? JSONDecoder().decode(TokenResponse.self, from: Data(answer.readableBytesView))
                .access_token, !token.isEmpty
        else { throw DeliveryError(.transient, "carrier token endpoint answered no access_token") }
        return token
    }

    /// `POST /verify` with the number, plain or hashed as configured.
    private func verify(
        _ settings: CarrierCheckSettings, accessToken: String, phoneNumber: String, correlator: String,
        timeout: Duration
    ) async throws -> CarrierCheckStatus {
        let url = ProviderHTTP.trimmed(settings.apiURL) + "/verify"
        try await addresses.requirePublic(url)
        let body: VerifyRequest =
            switch settings.numberFormat {
            case .plain: VerifyRequest(phoneNumber: phoneNumber)
            case .hashed: VerifyRequest(hashedPhoneNumber: SecretHash.hex(phoneNumber))
            }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "x-correlator", value: correlator)
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        let (response, answer) = try await ProviderHTTP.exchange(
            request, provider: "carrier /verify", timeout: timeout, httpClient: httpClient, logger: logger)
        let status = Int(response.status.code)
        switch status {
        case 200..<300:
            guard let verified = try? JSONDecoder().decode(VerifyResponse.self, from: Data(answer.readableBytesView))
            else {
                throw DeliveryError(.transient, "carrier /verify answered no devicePhoneNumberVerified")
            }
            return verified.devicePhoneNumberVerified ? .verified : .notVerified
        case 401, 403:
            // The token was not good for this (401), or the device did not authenticate over the mobile network
            // (403 NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK): no carrier proof, use a code.
            let code =
                (try? JSONDecoder().decode(ErrorInfo.self, from: Data(answer.readableBytesView)))?.code ?? "unknown"
            logger.info(
                "The carrier's /verify refused the check",
                metadata: ["http.status": "\(status)", "code": "\(code.prefix(80))"])
            return .authorizationFailed
        default:
            throw DeliveryError(.transient, "carrier /verify answered \(status)")
        }
    }

    /// The PKCE verifier of the flow whose state is `state`: 43 characters of an HMAC only this server can make.
    private func verifier(state: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(state.utf8), using: pkceKey))
    }

    /// `NumberVerificationRequestBody`: exactly one of the two.
    private struct VerifyRequest: Encodable {
        var phoneNumber: String?
        var hashedPhoneNumber: String?
    }

    /// `NumberVerificationMatchResponse`.
    private struct VerifyResponse: Decodable {
        var devicePhoneNumberVerified: Bool
    }

    /// CAMARA's `ErrorInfo`.
    private struct ErrorInfo: Decodable {
        var code: String
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// RFC 6749 §5.1, the part Verity reads.
    private struct TokenResponse: Decodable {
        var access_token: String
    }

    /// RFC 6749 §5.2, the part Verity logs.
    private struct OAuthError: Decodable {
        var error: String
    }
}
