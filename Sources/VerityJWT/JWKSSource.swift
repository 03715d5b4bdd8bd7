import Foundation
import VerityCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a ``SessionVerifier`` gets the project's signing keys from.
public protocol JWKSSource: Sendable {
    /// Fetches the current key set.
    ///
    /// - Returns: The key set.
    /// - Throws: Any error if the keys cannot be fetched; the verifier reports it as
    ///   ``SessionTokenError/jwksUnavailable(reason:)``.
    func keys() async throws -> JSONWebKeySet
}

/// A ``JWKSSource`` that downloads the key set over HTTP(S) with `URLSession`, typically from
/// `https://verity.example.com/v1/projects/{projectId}/.well-known/jwks.json`.
///
/// It does no caching of its own: ``SessionVerifier`` caches keys by `kid` and limits how often it asks.
public struct URLSessionJWKSSource: JWKSSource {
    /// The URL of the JWKS document.
    public let url: URL
    private let session: URLSession

    /// Creates a source.
    ///
    /// - Parameters:
    ///   - url: The URL of the JWKS document.
    ///   - session: The session to fetch with; `URLSession.shared` unless given.
    public init(url: URL, session: URLSession = .shared) {
        self.url = url
        self.session = session
    }

    /// Fetches and decodes the key set.
    ///
    /// - Returns: The key set.
    /// - Throws: ``JWKSFetchError`` if the response is not HTTP 200 or not a JWKS document; an error from
    ///   `URLSession` if the request fails.
    public func keys() async throws -> JSONWebKeySet {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw JWKSFetchError.unexpectedStatus((response as? HTTPURLResponse)?.statusCode ?? 0)
        }
        do {
            return try JSONDecoder().decode(JSONWebKeySet.self, from: data)
        } catch {
            throw JWKSFetchError.invalidDocument
        }
    }
}

/// Why ``URLSessionJWKSSource`` could not produce a key set.
public enum JWKSFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with this HTTP status instead of 200 (0 if the response was not HTTP).
    case unexpectedStatus(Int)
    /// The response body is not a JWKS document.
    case invalidDocument

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .unexpectedStatus(let status): "The JWKS request returned HTTP status \(status)."
        case .invalidDocument: "The JWKS response is not a JSON Web Key Set."
        }
    }
}

/// A ``JWKSSource`` that always returns the same key set: for tests, or for keys distributed out of band.
public struct StaticJWKSSource: JWKSSource {
    /// The key set returned by ``keys()``.
    public let keySet: JSONWebKeySet

    /// Creates a source.
    ///
    /// - Parameter keySet: The key set to return.
    public init(_ keySet: JSONWebKeySet) {
        self.keySet = keySet
    }

    /// Returns ``keySet``.
    ///
    /// - Returns: The key set.
    public func keys() async throws -> JSONWebKeySet {
        keySet
    }
}
