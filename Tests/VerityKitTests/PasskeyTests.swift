import Foundation
import Testing
import VerityCore
import VerityKit

/// A ``PasskeyAuthenticator`` that answers with fixed credentials and records the requests it got.
actor ScriptedPasskeyAuthenticator: PasskeyAuthenticator {
    private(set) var registrations: [PasskeyRegistrationRequest] = []
    private(set) var assertions: [PasskeyAssertionRequest] = []
    private let failure: PasskeyError?

    init(failure: PasskeyError? = nil) {
        self.failure = failure
    }

    static let credentialId = Data([0xfb, 0xff, 0x01, 0x02, 0x03])
    static let clientData = Data(#"{"type":"webauthn.create"}"#.utf8)
    static let attestation = Data([0xa3, 0x63, 0x66, 0x6d, 0x74])
    static let authenticatorData = Data([0x49, 0x96, 0x0d, 0xe5, 0x88, 0x0e, 0x8c, 0x68])
    static let signature = Data([0x30, 0x45, 0x02, 0x20, 0xfe, 0xff])
    static let userHandle = Data([0xff, 0xee, 0x00, 0x3f])

    func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
        registrations.append(request)
        if let failure { throw failure }
        return PasskeyRegistration(
            credentialId: Self.credentialId, clientDataJSON: Self.clientData, attestationObject: Self.attestation)
    }

    func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
        assertions.append(request)
        if let failure { throw failure }
        return PasskeyAssertion(
            credentialId: Self.credentialId, clientDataJSON: Self.clientData,
            authenticatorData: Self.authenticatorData, signature: Self.signature, userHandle: Self.userHandle,
            isPlatformAttachment: false)
    }
}

@Suite("Passkeys: the server's standard options in, the standard credential JSON out")
struct PasskeyTests {
    static let creationOptions = """
        {"rp":{"id":"example.com","name":"Example"},
         "user":{"id":"_-4APw","name":"ada@example.com","displayName":"Ada Lovelace"},
         "challenge":"3q2-7w","pubKeyCredParams":[{"type":"public-key","alg":-8},{"type":"public-key","alg":-7}],
         "timeout":300000,"excludeCredentials":[{"type":"public-key","id":"AQID","transports":["internal"]}],
         "authenticatorSelection":{"residentKey":"required","userVerification":"required"},
         "attestation":"direct","extensions":{"credProps":true}}
        """
    static let requestOptions = """
        {"challenge":"AAEC_w","timeout":300000,"rpId":"example.com",
         "allowCredentials":[{"type":"public-key","id":"-_8BAgM"}],"userVerification":"discouraged"}
        """

    static func json(_ text: String, status: Int = 200) -> TransportResponse {
        TransportResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    /// A request's JSON body, to compare with a dictionary.
    static func body(_ request: TransportRequest) throws -> NSDictionary {
        let body = try #require(request.body)
        return try #require(try JSONSerialization.jsonObject(with: body) as? NSDictionary)
    }

    @Test("register: the creation options become the provider's inputs, the credential the standard JSON")
    func register() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        let authenticator = ScriptedPasskeyAuthenticator()
        let passkeys = VerityPasskeys(session: harness.verity, authenticator: authenticator)
        await harness.enqueue(Self.json(Self.creationOptions))
        await harness.enqueue(Self.json(#"{"id":"pk_1"}"#))
        try await passkeys.register()

        let request = try #require(await authenticator.registrations.first)
        #expect(
            request
                == PasskeyRegistrationRequest.expected(
                    relyingPartyId: "example.com", challenge: Data([0xde, 0xad, 0xbe, 0xef]),
                    userName: "ada@example.com",
                    displayName: "Ada Lovelace", userId: Data([0xff, 0xee, 0x00, 0x3f]), userVerification: .required,
                    attestation: "direct", excludedCredentialIds: [Data([1, 2, 3])]))

        let requests = await harness.requests
        let (options, verify) = (requests[1], requests[2])
        #expect(options.url.path == "/v1/auth/passkeys/registration/options")
        #expect(verify.url.path == "/v1/auth/passkeys/registration/verify")
        #expect(bearerToken(of: options) != nil && bearerToken(of: verify) == bearerToken(of: options))
        #expect(verify.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(
            try Self.body(verify)
                == ([
                    "id": "-_8BAgM", "rawId": "-_8BAgM", "type": "public-key", "authenticatorAttachment": "platform",
                    "clientExtensionResults": [:],
                    "response": [
                        "clientDataJSON": Base64URL.encode(ScriptedPasskeyAuthenticator.clientData),
                        "attestationObject": "o2NmbXQ", "transports": ["internal", "hybrid"],
                    ],
                ] as [String: Any] as NSDictionary))
    }

    @Test("sign-in with and without a login id: the request options go in, the assertion JSON out, the session in")
    func signIn() async throws {
        for loginId in ["ada@example.com", nil] as [String?] {
            let harness = try SessionHarness()
            let authenticator = ScriptedPasskeyAuthenticator()
            let passkeys = VerityPasskeys(session: harness.verity, authenticator: authenticator)
            await harness.enqueue(Self.json(Self.requestOptions))
            try await harness.enqueue(SessionFixture.auth(amr: ["hwk", "user"], acr: "mfa"))
            let session = try await passkeys.signIn(loginId: loginId, sessionClaims: ["plan": .string("pro")])
            #expect(session.user == SessionFixture.user)
            #expect(try await harness.verity.validSessionJWT() == session.sessionJwt)

            let request = try #require(await authenticator.assertions.first)
            #expect(request.relyingPartyId == "example.com")
            #expect(request.challenge == Data([0, 1, 2, 0xff]))
            #expect(request.allowedCredentialIds == [ScriptedPasskeyAuthenticator.credentialId])
            #expect(request.userVerification == .discouraged)
            #expect(!request.isAutoFill)

            let requests = await harness.requests
            #expect(requests[0].url.path == "/v1/auth/passkeys/authentication/options")
            #expect(
                try Self.body(requests[0])
                    == ((loginId.map { ["loginId": $0] } ?? [:]).merging(["sessionClaims": ["plan": "pro"]]) { $1 }
                        as NSDictionary))
            #expect(requests[1].url.path == "/v1/auth/passkeys/authentication/verify")
            #expect(
                try Self.body(requests[1])
                    == ([
                        "id": "-_8BAgM", "rawId": "-_8BAgM", "type": "public-key",
                        "authenticatorAttachment": "cross-platform", "clientExtensionResults": [:],
                        "response": [
                            "clientDataJSON": Base64URL.encode(ScriptedPasskeyAuthenticator.clientData),
                            "authenticatorData": "SZYN5YgOjGg", "signature": "MEUCIP7_", "userHandle": "_-4APw",
                        ],
                    ] as [String: Any] as NSDictionary))
        }
    }

    @Test("AutoFill asks the platform for an AutoFill-assisted request, and options without an rpId use the host")
    func autoFill() async throws {
        let harness = try SessionHarness()
        let authenticator = ScriptedPasskeyAuthenticator()
        await harness.enqueue(Self.json(#"{"challenge":"AAEC_w"}"#))
        try await harness.enqueue(SessionFixture.auth())
        _ = try await VerityPasskeys(session: harness.verity, authenticator: authenticator).signInWithAutoFill()
        let request = try #require(await authenticator.assertions.first)
        #expect(request.isAutoFill)
        #expect(request.relyingPartyId == "verity.test")
        #expect(request.allowedCredentialIds.isEmpty)
        #expect(request.userVerification == .preferred)
    }

    @Test("options that are not base64url or take no ES256 are refused before the platform is asked")
    func malformedOptions() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        let authenticator = ScriptedPasskeyAuthenticator()
        let passkeys = VerityPasskeys(session: harness.verity, authenticator: authenticator)
        await harness.enqueue(
            Self.json(Self.creationOptions.replacingOccurrences(of: #""alg":-7"#, with: #""alg":-257"#)))
        await #expect(throws: VerityKitError.self) { try await passkeys.register() }
        await harness.enqueue(Self.json(#"{"challenge":"not base64url!"}"#))
        await #expect(throws: VerityKitError.self) { try await passkeys.signIn() }
        #expect(await authenticator.registrations.isEmpty)
        #expect(await authenticator.assertions.isEmpty)
    }

    @Test("a cancelled passkey sheet signs no one in and sends nothing more")
    func cancelled() async throws {
        let harness = try SessionHarness()
        let passkeys = VerityPasskeys(
            session: harness.verity, authenticator: ScriptedPasskeyAuthenticator(failure: .cancelled))
        await harness.enqueue(Self.json(Self.requestOptions))
        await #expect(throws: PasskeyError.cancelled) { try await passkeys.signIn() }
        #expect(await harness.requests.count == 1)
        await #expect(throws: VerityKitError.notSignedIn) { try await harness.verity.validSessionJWT() }
    }
}

extension PasskeyRegistrationRequest {
    /// The request the tests expect, built field by field (the type's own initialiser reads options).
    static func expected(
        relyingPartyId: String, challenge: Data, userName: String, displayName: String, userId: Data,
        userVerification: PasskeyUserVerification, attestation: String, excludedCredentialIds: [Data]
    ) -> PasskeyRegistrationRequest {
        PasskeyRegistrationRequest(
            relyingPartyId: relyingPartyId, challenge: challenge, userName: userName, displayName: displayName,
            userId: userId, userVerification: userVerification, attestation: attestation,
            excludedCredentialIds: excludedCredentialIds)
    }
}
