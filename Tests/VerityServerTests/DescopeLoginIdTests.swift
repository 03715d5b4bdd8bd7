import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// The Descope face asks whether a login id is the signed-in user's by the Domain's one comparison of login ids
/// (``UserLogins/key(for:)``), as sign-in does: a phone number however it is written, an email address in any letter
/// case. A plain case-insensitive string comparison refused a number written with spaces and dashes.
@Suite("Descope login ids compared as the Domain compares them")
struct DescopeLoginIdTests {
    @Test(
        "Step-up and login update accept the user's login id in another written form; another user's is refused",
        arguments: TestEngine.available)
    func loginIdForms(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        _ = try await node.verity.users.create(
            CreateUserRequest(loginIds: [DescopeFaceTests.email, DescopeFaceTests.phone]), in: node.project)
        _ = try await node.verity.users.create(CreateUserRequest(loginIds: ["grace@example.com"]), in: node.project)
        try await node.run { client in
            let signedIn = try await DescopeFaceTests.signIn(
                DescopeFaceTests.email, method: "email", node: node, client: client)
            let bearer = "\(pid):\(try #require(signedIn["refreshJwt"] as? String))"
            // +14155550123 as a person writes it, and ada@example.com in capitals.
            let stepUp = try await client.descope(
                "/v1/auth/otp/signin/sms", bearer: bearer,
                json: #"{"loginId":"+1 (415) 555-0123","loginOptions":{"stepup":true}}"#)
            #expect(stepUp.status == .ok)
            #expect(try stepUp.json()["maskedPhone"] is String)
            let updatePhone = try await client.descope(
                "/v1/auth/otp/update/phone/sms", bearer: bearer,
                json: #"{"loginId":"ADA@Example.COM","phone":"+14155550177"}"#)
            #expect(updatePhone.status == .ok)
            #expect(try await node.sender.code(to: "+14155550177").isEmpty == false)
            let updateEmail = try await client.descope(
                "/v1/auth/otp/update/email", bearer: bearer,
                json: #"{"loginId":"+1 415-555-0123","email":"ada@example.org"}"#)
            #expect(updateEmail.status == .ok)
            #expect(try await node.sender.code(to: "ada@example.org").isEmpty == false)

            // Another user's login id, or one that is not a login id at all, is not the signed-in user's.
            for loginId in ["GRACE@example.com", "+1 415 555 0124", "ada@example"] {
                let refused = try await client.descope(
                    "/v1/auth/otp/update/email", bearer: bearer,
                    json: #"{"loginId":"\#(loginId)","email":"ada@example.net"}"#)
                #expect(try refused.descopeError() == "E011003", "\(loginId)")
            }
        }
    }
}
