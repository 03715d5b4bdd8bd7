import Foundation
import Testing
import VerityCore

@testable import VerityServer

@Suite("Passkey JSON forms of the native API")
struct PasskeyJSONTests {
    let party = PasskeyRelyingParty(
        settings: PasskeySettings(rpID: "example.com", rpName: "Example", origins: ["https://example.com"]))

    static func credential(_ json: [String: Any]) throws -> PublicKeyCredentialJSON {
        try JSONDecoder().decode(PublicKeyCredentialJSON.self, from: JSONSerialization.data(withJSONObject: json))
    }

    @Test("A PublicKeyCredential's JSON from the software authenticator decodes to answers the relying party takes")
    func answers() async throws {
        var authenticator = SoftwareAuthenticator()
        let challenge = [UInt8](repeating: 3, count: 32)
        let registration = authenticator.register(challenge: challenge, userHandle: Data([1, 2, 3]))
        let answer = try Self.credential(registration.json).registrationAnswer()
        #expect(answer.transports == ["internal"])
        let passkey = try await party.verifyRegistration(answer, challenge: challenge)
        let assertion = try authenticator.assert(challenge: challenge, credentialID: registration.credentialID)
        let assertionAnswer = try Self.credential(assertion.json).assertionAnswer()
        #expect(assertionAnswer.userHandle == Data([1, 2, 3]))
        #expect(
            try party.verifyAssertion(assertionAnswer, challenge: challenge, credential: passkey.credential)
                .userVerified)
    }

    @Test("A credential JSON with another type, id and rawId that differ, a missing field or bad base64url is refused")
    func refused() async throws {
        var authenticator = SoftwareAuthenticator()
        let registration = authenticator.register(challenge: [1], userHandle: Data([1]))
        var json = registration.json
        json["type"] = "password"
        #expect(throws: VerityError.self) { try Self.credential(json).registrationAnswer() }
        json = registration.json
        json["id"] = "AAAA"
        #expect(throws: VerityError.self) { try Self.credential(json).registrationAnswer() }
        json = registration.json
        json["rawId"] = "not base64url!"
        json["id"] = "not base64url!"
        #expect(throws: VerityError.self) { try Self.credential(json).registrationAnswer() }
        #expect(throws: VerityError.self) { try Self.credential(registration.json).assertionAnswer() }
        json = registration.json
        json["response"] = ["clientDataJSON": String(repeating: "A", count: 10_000), "attestationObject": "AA"]
        #expect(throws: VerityError.self) { try Self.credential(json).registrationAnswer() }
    }

    @Test("Options are written in the standard JSON forms: base64url challenge and ids, milliseconds, the preferences")
    func options() async throws {
        let creation = party.creationOptions(
            challenge: [0xFB, 0xFF], userHandle: Data([7]), userName: "ada@example.com", userDisplayName: "Ada",
            existing: [PasskeyCredentialDescriptor(id: Data([1, 2]), transports: ["internal"])])
        let json =
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(PublicKeyCredentialCreationOptionsJSON(creation))) as? [String: Any]
        let object = try #require(json)
        #expect(object["challenge"] as? String == "-_8")
        #expect(object["timeout"] as? Int == 300_000)
        #expect(object["attestation"] as? String == "none")
        #expect((object["rp"] as? [String: String])?["id"] == "example.com")
        #expect((object["user"] as? [String: String])?["id"] == "Bw")
        let excluded = try #require(object["excludeCredentials"] as? [[String: Any]])
        #expect(excluded.first?["id"] as? String == "AQI")
        #expect(excluded.first?["type"] as? String == "public-key")
        let algorithms = (object["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int }
        #expect(algorithms == [-7, -8, -257])
        let selection = try #require(object["authenticatorSelection"] as? [String: Any])
        #expect(selection["residentKey"] as? String == "preferred")
        #expect(selection["requireResidentKey"] as? Bool == false)

        let request = party.requestOptions(challenge: [1], allowed: [])
        let requestJSON =
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(PublicKeyCredentialRequestOptionsJSON(request))) as? [String: Any]
        #expect(requestJSON?["rpId"] as? String == "example.com")
        #expect((requestJSON?["allowCredentials"] as? [Any])?.isEmpty == true)
        #expect(requestJSON?["userVerification"] as? String == "preferred")
    }
}
