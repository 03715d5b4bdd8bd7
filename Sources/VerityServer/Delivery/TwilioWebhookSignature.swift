import AsyncHTTPClient
import Crypto
import Foundation
import Logging

/// How Twilio signs the requests it makes: base64 of HMAC-SHA1, keyed by the auth token, over the URL followed by
/// each parameter's name and value in name order. Twilio's helper libraries check it (`RequestValidator`); Verity
/// keys it with the project's webhook signing secret.
enum TwilioWebhookSignature {
    static func signature(url: String, params: [(String, String)], key: String) -> String {
        let data = params.sorted { $0.0 < $1.0 }.reduce(url) { $0 + $1.0 + $1.1 }
        let mac = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(data.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Data(mac).base64EncodedString()
    }
}
