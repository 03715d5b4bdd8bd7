import Foundation
import HTTPTypes
import Hummingbird

/// Which address a request comes from, for the per-client rate limits: the peer's, unless the peer is one of the
/// operator's trusted proxies (`VERITY_TRUSTED_PROXIES`). Then it is the nearest address the proxies recorded in the
/// forwarding header that is not itself a trusted proxy: walking the header from its right end, every entry a trusted
/// proxy added is skipped, and the first one no trusted proxy vouches for is the client. Anything left of that was
/// written by the client and is never believed, and nobody else's forwarding header is read at all.
struct ClientAddressMiddleware<Context: VerityClientAddressContext>: RouterMiddleware {
    let trusted: [IPNetwork]
    let header: TrustedProxies.Header

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard !trusted.isEmpty, let peer = context.clientAddress else { return try await next(request, context) }
        var context = context
        context.clientAddress = TrustedProxies.client(
            peer: peer, forwarded: Self.hops(in: request.headers, header), trusted: trusted)
        return try await next(request, context)
    }

    /// The addresses a forwarding header lists, leftmost first, over all its lines; nil for an entry that is not an
    /// address (`unknown`, an obfuscated node name, garbage).
    static func hops(in headers: HTTPFields, _ header: TrustedProxies.Header) -> [IPAddress?] {
        switch header {
        case .xForwardedFor:
            guard let name = HTTPField.Name("X-Forwarded-For") else { return [] }
            return headers[values: name].flatMap { $0.split(separator: ",") }.map {
                IPAddress($0.trimmingCharacters(in: .whitespaces))
            }
        case .forwarded:
            guard let name = HTTPField.Name("Forwarded") else { return [] }
            return headers[values: name].flatMap { $0.split(separator: ",") }.map { element -> IPAddress? in
                // `for=192.0.2.60;proto=http` or `for="[2001:db8::17]:4711"`.
                let pairs = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let value = pairs.first(where: { $0.lowercased().hasPrefix("for=") })?.dropFirst(4) else {
                    return nil
                }
                var node = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if node.hasPrefix("["), let end = node.firstIndex(of: "]") {
                    node = String(node[node.index(after: node.startIndex)..<end])
                } else if node.filter({ $0 == ":" }).count == 1, let colon = node.firstIndex(of: ":") {
                    node = String(node[..<colon])
                }
                return IPAddress(node)
            }
        }
    }
}

extension VerityRequestContext: VerityClientAddressContext {}
