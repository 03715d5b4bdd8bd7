import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import VerityCore

@testable import VerityServer

/// Finding 5 of the security review: a tenant's webhook must not reach the server's own network (SSRF), a redirect
/// must not bounce it there, and a slow webhook must not hold up anyone's codes.
@Suite("Outbound requests: public addresses only, no redirects, codes in their own lane")
struct SSRFTests {
    static let refused = [
        "http://127.0.0.1:9/events", "http://localhost:8080/", "http://LOCALHOST./x", "http://169.254.169.254/latest",
        "http://[::1]/", "http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/", "http://100.64.0.1/",
        "http://127.1/", "http://0x7f000001/", "http://2130706433/", "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/", "http://[fd00::1]/", "http://0.0.0.0/",
        "ftp://93.184.216.34/", "not a url",
    ]
    /// Spellings the second review found accepted at save (and refused only at delivery): the root's trailing dot,
    /// and IPv6 tunnels (6to4, Teredo) and NAT64 around loopback or metadata addresses.
    static let tunnelled = [
        "http://169.254.169.254./latest", "http://127.0.0.1../", "http://[2002:7f00:1::1]/",
        "http://[2002:a9fe:a9fe::]/", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        "http://[2001:0:7f00:1::5db8:d822]/", "http://[64:ff9b::a9fe:a9fe]/",
    ]
    static let allowed = [
        "https://hooks.example.com/verity", "http://93.184.216.34/x", "https://[2606:4700::1]/",
        "http://93.184.216.34./x", "http://[2002:5db8:d822::1]/", "http://[2001:0:4136:e378:8000:63bf:a247:27dd]/",
    ]

    @Test("Loopback, private, link-local and metadata addresses are refused in every spelling", arguments: refused)
    func refusedAddresses(url: String) {
        #expect(OutboundAddressPolicy().refusal(of: url) != nil)
    }

    @Test(
        "A trailing dot, 6to4, Teredo and NAT64 around an inner address are refused when saved, on the Twilio face too",
        arguments: TestEngine.available)
    func tunnelledAddresses(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.webhookAddresses.allowPrivate = false }
        let auth = try node.twilioAuth()
        for url in Self.tunnelled {
            await #expect(throws: ConfigurationError.self, "\(url)") {
                try await node.verity.admin.setWebhook(projectId: node.project.id, url: url)
            }
        }
        #expect(try await node.verity.admin.project(id: node.project.id).webhookURL == nil)
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            for url in Self.tunnelled {
                let refused = try await client.twilio(
                    .post, "/Services/\(service)/Webhooks", auth: auth,
                    form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": url])
                try refused.expectTwilioError(400, code: 60200)
            }
            let listed = try await client.twilio(.get, "/Services/\(service)/Webhooks", auth: auth)
            #expect(!String(buffer: listed.body).contains("webhook_url\":\"http"), "nothing was saved")
        }
    }

    @Test("Public addresses and host names are allowed when saved", arguments: allowed)
    func allowedAddresses(url: String) {
        #expect(OutboundAddressPolicy().refusal(of: url) == nil)
    }

    @Test("The development setting allows private addresses, never another scheme")
    func allowPrivate() {
        let policy = OutboundAddressPolicy(allowPrivate: true)
        #expect(policy.refusal(of: "http://127.0.0.1:9/events") == nil)
        #expect(policy.refusal(of: "ftp://127.0.0.1/") != nil)
        var configuration = ServerConfiguration()
        #expect(throws: Never.self) { try configuration.apply(environment: ["VERITY_WEBHOOK_ALLOW_PRIVATE": "true"]) }
        #expect(configuration.webhookAddresses.allowPrivate)
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["VERITY_WEBHOOK_ALLOW_PRIVATE": "yes please"])
        }
    }

    @Test(
        "Twilio face: a WebhookUrl at loopback or the metadata address is 400 60200; a public one is saved",
        arguments: TestEngine.available)
    func twilioWebhookRefused(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.webhookAddresses.allowPrivate = false }
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            for url in ["http://127.0.0.1:9/events", "http://169.254.169.254/latest/meta-data", "http://[::1]/"] {
                let refused = try await client.twilio(
                    .post, "/Services/\(service)/Webhooks", auth: auth,
                    form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": url])
                try refused.expectTwilioError(400, code: 60200)
            }
            let saved = try await client.twilio(
                .post, "/Services/\(service)/Webhooks", auth: auth,
                form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": "https://hooks.example.com/t"])
            #expect(saved.status == .created)
            let sid = try #require(try saved.json()["sid"] as? String)
            let moved = try await client.twilio(
                .post, "/Services/\(service)/Webhooks/\(sid)", auth: auth,
                form: ["WebhookUrl": "http://10.0.0.5/"])
            try moved.expectTwilioError(400, code: 60200)
        }
    }

    @Test("A project webhook at a private address is refused", arguments: TestEngine.available)
    func projectWebhookRefused(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.webhookAddresses.allowPrivate = false }
        await #expect(throws: ConfigurationError.self) {
            try await node.verity.admin.setWebhook(projectId: node.project.id, url: "http://169.254.169.254/")
        }
        #expect(try await node.verity.admin.project(id: node.project.id).webhookURL == nil)
        try await node.verity.database.close()
    }

    @Test(
        "A webhook URL is limited in bytes: a long non-ASCII one is refused, one at the limit still gets events",
        arguments: TestEngine.available)
    func webhookURLBytes(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        // Unlike characters, so PostgreSQL cannot compress the outbox's index entry for the URL.
        func url(_ characters: Int) -> String {
            "https://hooks.example.com/" + String((0..<characters).map { Character(UnicodeScalar(0x4E00 + $0 * 7)!) })
        }
        let tooLong = url(2000)  // 2 026 characters, 6 026 bytes
        let atLimit = url(674)
        #expect(tooLong.count < 2048 && tooLong.utf8.count > OutboundAddressPolicy.maxURLBytes)
        #expect(atLimit.utf8.count == OutboundAddressPolicy.maxURLBytes)
        await #expect(throws: ConfigurationError.self) {
            try await node.verity.admin.setWebhook(projectId: node.project.id, url: tooLong)
        }
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let refused = try await client.twilio(
                .post, "/Services/\(service)/Webhooks", auth: auth,
                form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": tooLong])
            try refused.expectTwilioError(400, code: 60200)
            let saved = try await client.twilio(
                .post, "/Services/\(service)/Webhooks", auth: auth,
                form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": atLimit])
            #expect(saved.status == .created)
            // A factor's creation queues its event to that URL in the same transaction.
            let factor = try await client.twilio(
                .post, "/Services/\(service)/Entities/user-0001-bytes/Factors", auth: auth,
                form: ["FactorType": "totp", "FriendlyName": "Phone"])
            #expect(factor.status == .created)
        }
    }

    @Test("At send time a host name that resolves to this machine is refused, and nothing reaches it")
    func refusedAfterResolution() async throws {
        // This machine's own name resolves to one of its addresses (loopback here): never a public one.
        let host = ProcessInfo.processInfo.hostName
        let requests = try await withStandIn(answer: StandInAnswer(status: .ok)) { baseURL, _ in
            let url = baseURL.replacingOccurrences(of: "127.0.0.1", with: host) + "/hook"
            #expect(OutboundAddressPolicy().refusal(of: url) == nil, "a host name passes the check when saved")
            let event = WebhookEvent(id: "msg_1", url: url, secret: "whsec_test", body: "{}")
            let strict = HTTPEventSender(logger: Logger(label: "test"))
            let error = await #expect(throws: DeliveryError.self) { try await strict.send(event) }
            #expect(error?.kind == .permanent)
            #expect(error?.reason.contains("not a public address") == true)
        }
        #expect(requests.isEmpty)
    }

    @Test("A redirect is not followed: the 3xx is a failed delivery and its target sees nothing")
    func redirectNotFollowed() async throws {
        let requests = NIOLockedValueBox<[String]>([])
        let router = Router()
        router.post("**") { request, _ -> Response in
            requests.withLockedValue { $0.append(request.uri.path) }
            return Response(status: .found, headers: [.location: "/inner"])
        }
        try await withLoopbackServer(router: router) { port in
            let event = WebhookEvent(
                id: "msg_2", url: "http://127.0.0.1:\(port)/hook", secret: "whsec_test", body: "{}")
            let sender = HTTPEventSender(
                addresses: OutboundAddressPolicy(allowPrivate: true), logger: Logger(label: "test"))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(event) }
            #expect(error?.kind == .permanent)
            #expect(error?.reason == "webhook 302")
        }
        #expect(requests.withLockedValue { $0 } == ["/hook"])
    }

    @Test("A webhook that does not answer holds up no code: codes have their own lane", arguments: TestEngine.available)
    func codesNotHeldByWebhooks(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let gate = Gate()
        let router = Router()
        router.post("**") { _, _ -> Response in
            await gate.arrive()
            await gate.waitUntilOpen()
            return Response(status: .ok)
        }
        try await withLoopbackServer(router: router) { port in
            _ = try await node.verity.admin.setWebhook(
                projectId: node.project.id, url: "http://127.0.0.1:\(port)/hooks")
            try await node.run { client in
                try await node.approveOneChallenge(client: client)
                await gate.waitForArrival()
                // The webhook is being delivered and will not answer: a code must still go out at once.
                let started = try await client.startVerification("+14155550177", key: node.apiKey)
                #expect(started.status == .created)
                _ = try await node.sender.code(to: "+14155550177")
                await gate.open()
            }
        }
    }
}

/// Holds a stand-in's answer until the test opens it, and tells the test when a request arrived.
private actor Gate {
    private var arrived = false
    private var isOpen = false
    private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []
    private var openWaiters: [CheckedContinuation<Void, Never>] = []

    func arrive() {
        arrived = true
        arrivalWaiters.forEach { $0.resume() }
        arrivalWaiters = []
    }

    func waitForArrival() async {
        if arrived { return }
        await withCheckedContinuation { arrivalWaiters.append($0) }
    }

    func open() {
        isOpen = true
        openWaiters.forEach { $0.resume() }
        openWaiters = []
    }

    func waitUntilOpen() async {
        if isOpen { return }
        await withCheckedContinuation { openWaiters.append($0) }
    }
}
