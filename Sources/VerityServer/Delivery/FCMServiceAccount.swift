import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// The parts of a Google service-account key that FCM needs.
struct FCMServiceAccount: Sendable {
    static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    var projectID: String
    var clientEmail: String
    var privateKeyID: String?
    var tokenURI: String
    var privateKey: _RSA.Signing.PrivateKey

    init(json: String) throws(DeliveryError) {
        let file: KeyFile
        do {
            file = try JSONDecoder().decode(KeyFile.self, from: Data(json.utf8))
        } catch {
            throw DeliveryError(.permanent, "fcm service account is not a JSON key file")
        }
        guard let projectID = file.projectID, !projectID.isEmpty,
            projectID.utf8.allSatisfy({ $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 > 0x20 && $0 < 0x7F })
        else { throw DeliveryError(.permanent, "fcm service account has no valid project_id") }
        guard let clientEmail = file.clientEmail, !clientEmail.isEmpty else {
            throw DeliveryError(.permanent, "fcm service account has no client_email")
        }
        guard let pem = file.privateKey, let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else {
            throw DeliveryError(.permanent, "fcm service account private_key is not a PEM RSA key of 2048 bits or more")
        }
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = file.privateKeyID.flatMap { $0.isEmpty ? nil : $0 }
        self.tokenURI = file.tokenURI.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultTokenURI
        self.privateKey = key
    }

    private struct KeyFile: Decodable {
        var projectID: String?
        var clientEmail: String?
        var privateKey: String?
        var privateKeyID: String?
        var tokenURI: String?

        enum CodingKeys: String, CodingKey {
            case projectID = "project_id"
            case clientEmail = "client_email"
            case privateKey = "private_key"
            case privateKeyID = "private_key_id"
            case tokenURI = "token_uri"
        }
    }
}
