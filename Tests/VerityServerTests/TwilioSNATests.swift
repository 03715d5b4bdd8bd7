import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The Twilio face's Silent Network Auth (`Channel=sna`) over the carrier check, against ``CamaraStandIn``.
@Suite("Twilio Verify face: Silent Network Auth")
struct TwilioSNATests {
    static let number = CarrierCheckTests.number

    /// Starts an SNA verification on a new service; the service and the verification's body.
    static func startSNA(auth: TwilioAuth, client: some TestClientProtocol) async throws
        -> (service: String, verification: [String: Any])
    {
        let service = try await client.twilioService(auth: auth)
        let started = try await client.twilio(
            .post, "/Services/\(service)/Verifications", auth: auth, form: ["To": number, "Channel": "sna"])
        #expect(started.status == .created)
        return (service, try started.json())
    }

    /// The SNA URL opened over mobile data, with the operator's redirect followed to the node's callback.
    static func open(_ verification: [String: Any], client: some TestClientProtocol) async throws {
        let url = try #require((verification["sna"] as? [String: Any])?["url"] as? String)
        let callback = try await CarrierCheckTests.openOverMobileData(url)
        #expect(try await client.send(.get, callback, key: nil).status == .ok)
    }

    static func snaErrorCodes(_ body: [String: Any]) -> [Int] {
        (body["sna_attempts_error_codes"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? Int }
    }

    @Test(
        "sna: the URL, then a check without a code approves once the carrier confirmed the number",
        arguments: TestEngine.available)
    func silentApproval(engine: TestEngine) async throws {
        try await CarrierCheckTests.withCarrier(engine, CamaraStandIn()) { node, client in
            let auth = try node.twilioAuth()
            let (service, verification) = try await Self.startSNA(auth: auth, client: client)
            let sid = try #require(verification["sid"] as? String)
            #expect(TwilioSID.isValid(sid, prefix: "VE"))
            #expect(verification["channel"] as? String == "sna")
            #expect(verification["status"] as? String == "pending")
            #expect(verification["to"] as? String == Self.number)
            try await Self.open(verification, client: client)
            let checked = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["VerificationSid": sid])
            #expect(checked.status == .ok)
            let body = try checked.json()
            #expect(body["status"] as? String == "approved" && body["valid"] as? Bool == true)
            #expect(body["sid"] as? String == sid && body["channel"] as? String == "sna")
            #expect(Self.snaErrorCodes(body).isEmpty)
            // Nothing was sent; approved once, then gone as on Twilio (by `To` as by SID).
            #expect(node.sender.messages().isEmpty)
            for form in [["To": Self.number], ["VerificationSid": sid]] {
                let again = try await client.twilio(
                    .post, "/Services/\(service)/VerificationCheck", auth: auth, form: form)
                try again.expectTwilioError(404, code: 20404)
            }
        }
    }

    @Test(
        "sna: before the carrier answered 60519, a number the carrier does not confirm 60500, both pending",
        arguments: TestEngine.available)
    func pendingWithReason(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        standIn.script.devicePhoneNumber = "+14155550198"
        try await CarrierCheckTests.withCarrier(engine, standIn) { node, client in
            let auth = try node.twilioAuth()
            let (service, verification) = try await Self.startSNA(auth: auth, client: client)
            let early = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": Self.number])
            #expect(early.status == .ok)
            let earlyBody = try early.json()
            #expect(earlyBody["status"] as? String == "pending" && earlyBody["valid"] as? Bool == false)
            #expect(Self.snaErrorCodes(earlyBody) == [60519])
            let attempt = (earlyBody["sna_attempts_error_codes"] as? [[String: Any]])?.first
            #expect((attempt?["attempt_sid"] as? String)?.hasPrefix("VL") == true)

            try await Self.open(verification, client: client)
            let refused = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth,
                form: ["VerificationSid": try #require(verification["sid"] as? String)])
            let refusedBody = try refused.json()
            #expect(refused.status == .ok && refusedBody["status"] as? String == "pending")
            #expect(Self.snaErrorCodes(refusedBody) == [60500])
        }
    }

    @Test(
        "sna: a failed authorization step is 60510, an operator that fails or times out 60511",
        arguments: TestEngine.available, [false, true])
    func operatorFailures(engine: TestEngine, operatorFails: Bool) async throws {
        let standIn = CamaraStandIn()
        if operatorFails {
            standIn.script.verifyError = (503, "UNAVAILABLE")
        } else {
            standIn.script.authorizationError = "access_denied"
        }
        try await CarrierCheckTests.withCarrier(engine, standIn) { node, client in
            let auth = try node.twilioAuth()
            let (service, verification) = try await Self.startSNA(auth: auth, client: client)
            try await Self.open(verification, client: client)
            let checked = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": Self.number])
            let body = try checked.json()
            #expect(checked.status == .ok && body["status"] as? String == "pending")
            #expect(Self.snaErrorCodes(body) == [operatorFails ? 60511 : 60510])
        }
    }

    @Test("sna: another service's verification is not found (20404)", arguments: TestEngine.available)
    func anotherService(engine: TestEngine) async throws {
        try await CarrierCheckTests.withCarrier(engine, CamaraStandIn()) { node, client in
            let auth = try node.twilioAuth()
            let (_, verification) = try await Self.startSNA(auth: auth, client: client)
            try await Self.open(verification, client: client)
            let other = try await client.twilioService(auth: auth)
            let foreign = try await client.twilio(
                .post, "/Services/\(other)/VerificationCheck", auth: auth,
                form: ["VerificationSid": try #require(verification["sid"] as? String)])
            try foreign.expectTwilioError(404, code: 20404)
        }
    }

    @Test("sna: a project without the carrier check refuses the channel (60223)", arguments: TestEngine.available)
    func carrierCheckOff(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let started = try await client.twilio(
                .post, "/Services/\(service)/Verifications", auth: auth,
                form: ["To": Self.number, "Channel": "sna"])
            try started.expectTwilioError(400, code: 60223)
            // Nothing was stored: a check without a code still needs its code.
            let checked = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": Self.number])
            try checked.expectTwilioError(400, code: 60200)
        }
    }
}
