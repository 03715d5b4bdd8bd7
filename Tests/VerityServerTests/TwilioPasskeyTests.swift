import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

@Suite("Twilio Verify face: Verify Passkeys")
struct TwilioPasskeyTests {
    static let passkeySettings = [
        "Passkeys.RelyingParty.Id": "example.com", "Passkeys.RelyingParty.Name": "Acme",
        "Passkeys.RelyingParty.Origins": "https://example.com,login.example.com",
        "Passkeys.AuthenticatorAttachment": "platform", "Passkeys.DiscoverableCredentials": "preferred",
        "Passkeys.UserVerification": "required",
    ]

    @Test(
        "Registration and approval: an unverified YF factor with options, verified; a YC challenge, approved",
        arguments: TestEngine.available)
    func registrationAndApproval(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.passkeyService(auth: auth)
            let fetched = try await client.twilio(.get, "/Services/\(service)", auth: auth).json()
            let settings = try #require(fetched["passkeys"] as? [String: Any])
            #expect(settings["user_verification"] as? String == "required")
            let party = try #require(settings["relying_party"] as? [String: Any])
            #expect(party["id"] as? String == "example.com")
            #expect(party["origins"] as? [String] == ["https://example.com", "login.example.com"])

            var device = SoftwareAuthenticator()
            let created = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Factors", auth: auth,
                ["friendly_name": "Ada's phone", "identity": "ada-0001-abcd"])
            #expect(created.status == .created)
            let factor = try created.json()
            let factorSid = try #require(factor["sid"] as? String)
            #expect(TwilioSID.isValid(factorSid, prefix: "YF"))
            #expect(factor["status"] as? String == "unverified" && factor["factor_type"] as? String == "passkeys")
            #expect(TwilioSID.isValid(try #require(factor["entity_sid"] as? String), prefix: "YE"))
            let options = try Self.publicKey(factor)
            #expect((options["rp"] as? [String: Any])?["id"] as? String == "example.com")
            let selection = try #require(options["authenticatorSelection"] as? [String: Any])
            #expect(selection["userVerification"] as? String == "required")
            #expect(selection["authenticatorAttachment"] as? String == "platform")

            let registration = try Self.register(&device, options)
            let verified = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/VerifyFactor", auth: auth, registration.json)
            #expect(verified.status == .ok)
            let verifiedFactor = try verified.json()
            #expect(verifiedFactor["sid"] as? String == factorSid)
            #expect(verifiedFactor["status"] as? String == "verified")
            // The options carry the registration's challenge: shown at creation only.
            #expect(verifiedFactor["options"] == nil)
            // The Verity user behind the entity holds no login id; the native API lists it so, as its document allows.
            let users = try await client.send(.get, "/v1/users", key: node.apiKey).decode(Page<User>.self).items
            #expect(users.map(\.loginIds) == [[]])
            #expect(users.first?.displayName == "ada-0001-abcd")

            let challenge = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Challenges", auth: auth,
                ["identity": "ada-0001-abcd", "factor_sid": factorSid])
            #expect(challenge.status == .created)
            let challengeBody = try challenge.json()
            let challengeSid = try #require(challengeBody["sid"] as? String)
            #expect(TwilioSID.isValid(challengeSid, prefix: "YC"))
            #expect(challengeBody["status"] as? String == "pending")
            let request = try Self.publicKey(challengeBody)
            let allowed = try #require(request["allowCredentials"] as? [[String: Any]])
            #expect(allowed.map { $0["id"] as? String } == [Base64URL.encode(registration.credentialID)])

            let assertion = try Self.assert(&device, request, registration.credentialID)
            let approved = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/ApproveChallenge", auth: auth, assertion.json)
            #expect(approved.status == .ok)
            let approvedBody = try approved.json()
            #expect(approvedBody["sid"] as? String == challengeSid)
            #expect(approvedBody["status"] as? String == "approved")
            #expect(approvedBody["factor_sid"] as? String == factorSid)
            #expect(approvedBody["date_responded"] as? String != nil)

            // A challenge that names no factor is approved by any of the entity's passkeys.
            let open = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Challenges", auth: auth, ["identity": "ada-0001-abcd"])
            let second = try Self.assert(&device, try Self.publicKey(try open.json()), registration.credentialID)
            let approvedOpen = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/ApproveChallenge", auth: auth, second.json)
            #expect(approvedOpen.status == .ok)
            #expect(try approvedOpen.json()["factor_sid"] as? String == factorSid)
        }
    }

    @Test(
        "Refused, each with its Twilio code, and nothing approved: an unissued challenge, a replay, a flipped bit",
        arguments: TestEngine.available)
    func refusedAnswers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.passkeyService(auth: auth)
            var device = SoftwareAuthenticator()
            let (_, credential) = try await client.registerPasskey(
                &device, identity: "ada-0001-abcd", service: service, auth: auth)
            let approve = "/Services/\(service)/Passkeys/ApproveChallenge"

            // An assertion over a challenge this server never issued.
            let forged = try device.assert(challenge: Array(repeating: 7, count: 32), credentialID: credential)
            try await client.twilioJSON(approve, auth: auth, forged.json).expectTwilioError(404, code: 20404)

            // A replay: the second use of one assertion finds its challenge spent.
            let (sid, request) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            let assertion = try Self.assert(&device, request, credential)
            #expect(try await client.twilioJSON(approve, auth: auth, assertion.json).status == .ok)
            try await client.twilioJSON(approve, auth: auth, assertion.json).expectTwilioError(404, code: 20404)

            // An answer sent to another service of the account finds no challenge there, and spends none.
            let other = try await client.passkeyService(auth: auth)
            let (_, elsewhereRequest) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            let elsewhere = try Self.assert(&device, elsewhereRequest, credential)
            try await client.twilioJSON(
                "/Services/\(other)/Passkeys/ApproveChallenge", auth: auth, elsewhere.json
            ).expectTwilioError(404, code: 20404)
            #expect(try await client.twilioJSON(approve, auth: auth, elsewhere.json).status == .ok)

            // A flipped signature bit.
            let (flippedSid, flippedRequest) = try await client.passkeyChallenge(
                identity: "ada-0001-abcd", service, auth)
            var flipped = try Self.assert(&device, flippedRequest, credential)
            flipped.signature[flipped.signature.count - 1] ^= 0x01
            try await client.twilioJSON(approve, auth: auth, flipped.json).expectTwilioError(403, code: 60324)
            #expect(sid != flippedSid)
            #expect(try await node.passkeyChallengeStatus(flippedSid, service: service) == "pending")
        }
    }

    @Test(
        "Refused with 60324: another identity's credential, a wrong origin, no UV, a counter regression, another factor",
        arguments: TestEngine.available)
    func refusedAuthenticators(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.passkeyService(auth: auth)
            let approve = "/Services/\(service)/Passkeys/ApproveChallenge"
            var ada = SoftwareAuthenticator()
            let (adaFactor, adaCredential) = try await client.registerPasskey(
                &ada, identity: "ada-0001-abcd", service: service, auth: auth)
            var bob = SoftwareAuthenticator()
            let (_, bobCredential) = try await client.registerPasskey(
                &bob, identity: "bob-0002-abcd", service: service, auth: auth)

            /// Answers a new challenge for Ada with `device`'s `credential`: 60324, and the challenge is not approved.
            func expectRefused(_ device: SoftwareAuthenticator, _ credential: Data) async throws {
                var device = device
                let (sid, request) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
                let answer = try Self.assert(&device, request, credential)
                try await client.twilioJSON(approve, auth: auth, answer.json).expectTwilioError(403, code: 60324)
                #expect(try await node.passkeyChallengeStatus(sid, service: service) == "pending")
            }

            // Bob's passkey answers a challenge issued to Ada.
            try await expectRefused(bob, bobCredential)

            // A page on an origin the service does not list.
            var phished = ada
            phished.origin = "https://example.evil"
            try await expectRefused(phished, adaCredential)

            // No user verification where the service requires it.
            var unverified = ada
            unverified.userVerified = false
            try await expectRefused(unverified, adaCredential)

            // A use that raises the counter, then a clone whose counter is behind it.
            let (_, usedRequest) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            let used = try Self.assert(&ada, usedRequest, adaCredential)
            #expect(try await client.twilioJSON(approve, auth: auth, used.json).status == .ok)
            var clone = ada
            clone.counter = 0
            try await expectRefused(clone, adaCredential)

            // A challenge for one factor, answered by Ada's other passkey: refused, and the challenge is spent.
            var laptop = SoftwareAuthenticator()
            let (_, laptopCredential) = try await client.registerPasskey(
                &laptop, identity: "ada-0001-abcd", service: service, auth: auth)
            let forPhone = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Challenges", auth: auth,
                ["identity": "ada-0001-abcd", "factor_sid": adaFactor])
            let phoneRequest = try Self.publicKey(try forPhone.json())
            let fromLaptop = try Self.assert(&laptop, phoneRequest, laptopCredential)
            try await client.twilioJSON(approve, auth: auth, fromLaptop.json).expectTwilioError(403, code: 60324)
            let fromPhone = try Self.assert(&ada, phoneRequest, adaCredential)
            try await client.twilioJSON(approve, auth: auth, fromPhone.json).expectTwilioError(404, code: 20404)
        }
    }

    @Test(
        "The entity's factors list its passkey factors after its TOTP one, across pages; fetch and delete take them too",
        arguments: TestEngine.available)
    func passkeyFactorsAmongTheEntitys(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.passkeyService(auth: auth)
            let entity = "/Services/\(service)/Entities/ada-0001-abcd"
            let totp = try await client.twilio(
                .post, entity + "/Factors", auth: auth, form: ["FriendlyName": "Authy", "FactorType": "totp"])
            #expect(totp.status == .created)
            let totpSid = try #require(try totp.json()["sid"] as? String)
            var device = SoftwareAuthenticator()
            let (verifiedSid, credential) = try await client.registerPasskey(
                &device, identity: "ada-0001-abcd", service: service, auth: auth)
            node.clock.advance(by: 1)
            let unverified = try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Factors", auth: auth,
                ["friendly_name": "Laptop", "identity": "ada-0001-abcd"])
            let unverifiedSid = try #require(try unverified.json()["sid"] as? String)

            var listed: [[String: Any]] = []
            var next: String? = entity + "/Factors?PageSize=2"
            var pages = 0
            while let path = next {
                let page = try await client.twilio(.get, path, auth: auth)
                #expect(page.status == .ok)
                let body = try page.json()
                listed += try #require(body["factors"] as? [[String: Any]])
                next = ((body["meta"] as? [String: Any])?["next_page_url"] as? String).map {
                    String($0.dropFirst("http://127.0.0.1:8080/twilio/v2".count))
                }
                pages += 1
            }
            #expect(pages == 2)
            #expect(listed.compactMap { $0["sid"] as? String } == [totpSid, verifiedSid, unverifiedSid])
            #expect(listed.compactMap { $0["factor_type"] as? String } == ["totp", "passkeys", "passkeys"])
            #expect(listed.compactMap { $0["status"] as? String } == ["unverified", "verified", "unverified"])
            #expect(listed.allSatisfy { $0["options"] == nil || $0["options"] is NSNull })

            let fetched = try await client.twilio(.get, entity + "/Factors/\(verifiedSid)", auth: auth)
            #expect(fetched.status == .ok)
            let factor = try fetched.json()
            #expect(factor["factor_type"] as? String == "passkeys" && factor["friendly_name"] as? String == "Phone")
            #expect((factor["url"] as? String)?.hasSuffix("\(entity)/Factors/\(verifiedSid)") == true)

            // Deleting the verified factor deletes its passkey: a challenge names none of the entity's passkeys.
            let deleted = try await client.twilio(.delete, entity + "/Factors/\(verifiedSid)", auth: auth)
            #expect(deleted.status == .noContent)
            try await client.twilio(.get, entity + "/Factors/\(verifiedSid)", auth: auth)
                .expectTwilioError(404, code: 20404)
            try await client.twilio(.delete, entity + "/Factors/\(verifiedSid)", auth: auth)
                .expectTwilioError(404, code: 20404)
            let (_, request) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            #expect((request["allowCredentials"] as? [[String: Any]] ?? []).isEmpty)
            let stale = try Self.assert(&device, request, credential)
            try await client.twilioJSON("/Services/\(service)/Passkeys/ApproveChallenge", auth: auth, stale.json)
                .expectTwilioError(403, code: 60324)

            #expect(
                try await client.twilio(.delete, entity + "/Factors/\(unverifiedSid)", auth: auth).status == .noContent)
            #expect(try await client.twilio(.delete, entity + "/Factors/\(totpSid)", auth: auth).status == .noContent)
            let empty = try await client.twilio(.get, entity + "/Factors", auth: auth).json()
            #expect((empty["factors"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "Deleting the entity deletes its passkeys: its pending challenge is gone, and an entity made again has none",
        arguments: TestEngine.available)
    func entityDeletion(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.passkeyService(auth: auth)
            let approve = "/Services/\(service)/Passkeys/ApproveChallenge"
            var old = SoftwareAuthenticator()
            let (_, oldCredential) = try await client.registerPasskey(
                &old, identity: "ada-0001-abcd", service: service, auth: auth)
            let (_, pending) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            let deleted = try await client.twilio(.delete, "/Services/\(service)/Entities/ada-0001-abcd", auth: auth)
            #expect(deleted.status == .noContent)
            let late = try Self.assert(&old, pending, oldCredential)
            try await client.twilioJSON(approve, auth: auth, late.json).expectTwilioError(404, code: 20404)

            var new = SoftwareAuthenticator()
            let (_, newCredential) = try await client.registerPasskey(
                &new, identity: "ada-0001-abcd", service: service, auth: auth)
            let (_, request) = try await client.passkeyChallenge(identity: "ada-0001-abcd", service, auth)
            let allowed = try #require(request["allowCredentials"] as? [[String: Any]])
            #expect(allowed.map { $0["id"] as? String } == [Base64URL.encode(newCredential)])
            let stale = try Self.assert(&old, request, oldCredential)
            try await client.twilioJSON(approve, auth: auth, stale.json).expectTwilioError(403, code: 60324)
        }
    }

    @Test(
        "Missing authenticator criteria are 60393, naming them; a factor's config supplies them; bad input is 60200",
        arguments: TestEngine.available)
    func criteriaAndInput(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let created = try await client.twilio(
                .post, "/Services", auth: auth,
                form: [
                    "FriendlyName": "Acme", "Passkeys.RelyingParty.Id": "example.com",
                    "Passkeys.RelyingParty.Name": "Acme", "Passkeys.RelyingParty.Origins": "https://example.com",
                ])
            let service = try #require(try created.json()["sid"] as? String)
            let factors = "/Services/\(service)/Passkeys/Factors"
            let missing = try await client.twilioJSON(
                factors, auth: auth, ["friendly_name": "Phone", "identity": "ada-0001-abcd"]
            ).expectTwilioError(400, code: 60393)
            let message = try #require(missing["message"] as? String)
            #expect(
                message.contains("authenticator_attachment") && message.contains("discoverable_credentials")
                    && message.contains("user_verification"))
            // Nothing was made: no entity for the identity.
            #expect(
                try await client.twilio(.get, "/Services/\(service)/Entities/ada-0001-abcd", auth: auth).status
                    == .notFound)

            let configured = try await client.twilioJSON(
                factors, auth: auth,
                [
                    "friendly_name": "Phone", "identity": "ada-0001-abcd",
                    "config": [
                        "authenticator_attachment": "any", "discoverable_credentials": "required",
                        "user_verification": "preferred",
                    ],
                ])
            #expect(configured.status == .created)
            let options = try Self.publicKey(try configured.json())
            let selection = try #require(options["authenticatorSelection"] as? [String: Any])
            #expect(selection["residentKey"] as? String == "required" && selection["authenticatorAttachment"] == nil)

            // A relying party that PasskeySettings refuses, a bad criterion, a body that is not a credential.
            try await client.twilio(
                .post, "/Services/\(service)", auth: auth, form: ["Passkeys.RelyingParty.Origins": "https://evil.test"]
            ).expectTwilioError(400, code: 60200)
            try await client.twilio(
                .post, "/Services/\(service)", auth: auth, form: ["Passkeys.UserVerification": "always"]
            ).expectTwilioError(400, code: 60200)
            try await client.twilioJSON(
                "/Services/\(service)/Passkeys/VerifyFactor", auth: auth, ["id": "AAAA", "type": "public-key"]
            ).expectTwilioError(400, code: 60200)
            try await client.twilioJSON(
                "/Services/\(service)/Passkeys/Challenges", auth: auth, ["identity": "nobody-0001-abcd"]
            ).expectTwilioError(404, code: 20404)
        }
    }

    // MARK: - Helpers

    /// `options.publicKey` of a factor or a challenge.
    static func publicKey(_ body: [String: Any]) throws -> [String: Any] {
        try #require((body["options"] as? [String: Any])?["publicKey"] as? [String: Any])
    }

    static func register(_ device: inout SoftwareAuthenticator, _ options: [String: Any]) throws
        -> SoftwareAuthenticator.Registration
    {
        let challenge = try #require((options["challenge"] as? String).flatMap(Base64URL.decode))
        let user = try #require(options["user"] as? [String: Any])
        let handle = try #require((user["id"] as? String).flatMap(Base64URL.decode))
        return device.register(challenge: challenge, userHandle: Data(handle))
    }

    static func assert(_ device: inout SoftwareAuthenticator, _ options: [String: Any], _ credential: Data) throws
        -> SoftwareAuthenticator.Assertion
    {
        let challenge = try #require((options["challenge"] as? String).flatMap(Base64URL.decode))
        return try device.assert(challenge: challenge, credentialID: credential)
    }
}

extension TestNode {
    /// The stored status of a passkey challenge, as the face keeps it.
    func passkeyChallengeStatus(_ sid: String, service: String) async throws -> String? {
        try await TwilioPasskeyStore(database: verity.database).challenge(sid: sid, serviceSid: service)?.status
    }
}

extension TestClientProtocol {
    /// A JSON request to the Twilio face, as the Verify Passkeys routes take them.
    func twilioJSON(_ path: String, auth: TwilioAuth, _ body: [String: Any]) async throws -> TestResponse {
        let data = try JSONSerialization.data(withJSONObject: body)
        return try await execute(
            uri: "/twilio/v2" + path, method: .post,
            headers: [.authorization: auth.header, .contentType: "application/json"], body: ByteBuffer(bytes: data))
    }

    /// A service with the relying party of ``SoftwareAuthenticator``'s defaults, UV required.
    func passkeyService(auth: TwilioAuth) async throws -> String {
        let response = try await twilio(
            .post, "/Services", auth: auth,
            form: TwilioPasskeyTests.passkeySettings.merging(["FriendlyName": "Acme"]) { $1 })
        #expect(response.status == .created)
        return try #require(try response.json()["sid"] as? String)
    }

    /// Creates and verifies a passkey factor for `identity`; its SID and credential id.
    func registerPasskey(
        _ device: inout SoftwareAuthenticator, identity: String, service: String, auth: TwilioAuth
    ) async throws -> (String, Data) {
        let created = try await twilioJSON(
            "/Services/\(service)/Passkeys/Factors", auth: auth, ["friendly_name": "Phone", "identity": identity])
        let registration = try TwilioPasskeyTests.register(
            &device, try TwilioPasskeyTests.publicKey(try created.json()))
        let verified = try await twilioJSON(
            "/Services/\(service)/Passkeys/VerifyFactor", auth: auth, registration.json)
        #expect(verified.status == .ok)
        return (try #require(try verified.json()["sid"] as? String), registration.credentialID)
    }

    /// A challenge for `identity`: its SID and `options.publicKey`.
    func passkeyChallenge(identity: String, _ service: String, _ auth: TwilioAuth) async throws
        -> (String, [String: Any])
    {
        let created = try await twilioJSON(
            "/Services/\(service)/Passkeys/Challenges", auth: auth, ["identity": identity])
        #expect(created.status == .created)
        let body = try created.json()
        return (try #require(body["sid"] as? String), try TwilioPasskeyTests.publicKey(body))
    }
}
