import Foundation
import HummingbirdTesting
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Which proof each sign-in or flow used, per project and day: recorded where it happens, counted in the metrics,
/// and reported for the console's proofs page.
@Suite("Proofs per project and day")
struct ProofActivityTests {
    /// Today's index in a report of ``VerificationService/activityDays`` days.
    static let today = VerificationService.activityDays - 1

    @Test(
        "A sign-in by App Attest and one by silent push are recorded on their codes, each on its day, with the codes",
        arguments: TestEngine.available)
    func appProofs(engine: TestEngine) async throws {
        let (node, device, project) = try await AppAttestTests.node(engine)
        try await node.run { client in
            try await AppAttestTests.attest(device, client: client, project: project)
            let attested = try await AppAttestTests.signIn(
                "ada@example.com", device: device, counter: 1, client: client, project: project)
            #expect(attested.status == .ok)
            try await Self.verify("ada@example.com", node: node, client: client, project: project)

            // The next day, a silent push proves the app.
            node.clock.advance(by: 86_400)
            let proof = try await AppVerificationTests.verifyApp(node: node, client: client, project: project)
            let pushed = try await AppVerificationTests.start(
                "bob@example.com", proof: "\(proof.id).\(proof.secret)", client: client, project: project)
            #expect(pushed.status == .ok)
            try await Self.verify("bob@example.com", node: node, client: client, project: project)

            let report = try await node.verity.proofs.report(in: project)
            #expect(report.count(.appAttest, day: Self.today - 1) == 1)
            #expect(report.count(.code, day: Self.today - 1) == 1)
            #expect(report.count(.silentPush, day: Self.today) == 1)
            #expect(report.count(.code, day: Self.today) == 1)
            #expect(report.count(.appAttest, day: Self.today) == 0)
            #expect(report.count(.silentPush, day: Self.today - 1) == 0)
            #expect(report.count(.carrier, day: Self.today) == 0)

            let metrics = String(buffer: try await client.send(.get, "/metrics", key: nil).body)
            for proof in ["app_attest", "silent_push"] {
                #expect(
                    metrics.contains(
                        #"verity_app_verification_proofs_total{project="\#(project.id)",proof="\#(proof)"} 1"#))
            }
            // Another project sees none of them.
            let (other, _) = try await node.otherProject()
            #expect(try await node.verity.proofs.report(in: other).counts.isEmpty)
        }
    }

    @Test(
        "A possession flow proven by the carrier counts as carrier, one proven by a code as code",
        arguments: TestEngine.available)
    func possessionProofs(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        try await CarrierCheckTests.withCarrier(engine, standIn) { node, client in
            let (_, confirmed) = try await CarrierCheckTests.startAndOpen(node: node, client: client)
            #expect(try confirmed.decode(PossessionState.self).status == .succeeded)

            // The operator sees another number: the flow falls back to a code.
            standIn.script.devicePhoneNumber = "+14155550198"
            let (flow, refused) = try await CarrierCheckTests.startAndOpen(node: node, client: client)
            #expect(try refused.decode(PossessionState.self).status == .created)
            #expect(try await flow.step("otp/start", client: client).status == .ok)
            let code = try await node.sender.code(to: CarrierCheckTests.number)
            let done = try await flow.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)

            let project = try await node.verity.admin.project(id: node.project.id)
            let report = try await node.verity.proofs.report(in: project)
            #expect(report.count(.carrier, day: Self.today) == 1)
            // The flow's code is its proof, counted once, as the flow's.
            #expect(report.count(.code, day: Self.today) == 1)
            #expect(report.count(.silentPush, day: Self.today) == 0)
        }
    }

    @Test(
        "The console's proofs page shows a fortnight, today's sign-in by code on today's row",
        arguments: TestEngine.available)
    func consolePage(engine: TestEngine) async throws {
        let node = try await ConsoleTests.nodeWithOperator(engine)
        try await node.run { client in
            _ = try await client.signIn("+14155550142", node: node)
            let session = try await client.signIn(node, operatorName: "ada")
            let page = try await client.get("/console/projects/\(node.project.id)/proofs", session: session)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            let today = node.clock.now().formatted(.iso8601.year().month().day().dateSeparator(.dash))
            // Silent push, App Attest, carrier, code, instant link.
            #expect(html.contains("<tr><td>\(today)</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td></tr>"))
            #expect(html.components(separatedBy: "<tr><td>").count - 1 == VerificationService.activityDays)
            let dashboard = String(buffer: try await client.get("/console", session: session).body)
            #expect(dashboard.contains("<tr><td>Code</td><td>1</td></tr>"))
            #expect(dashboard.contains("<tr><td>App Attest</td><td>0</td></tr>"))
            let projectPage = try await client.get("/console/projects/\(node.project.id)", session: session)
            #expect(String(buffer: projectPage.body).contains("/console/projects/\(node.project.id)/proofs"))
        }
    }

    /// Signs in with the code sent to `loginId`.
    static func verify(
        _ loginId: String, node: TestNode, client: some TestClientProtocol, project: Project
    ) async throws {
        let code = try await node.sender.code(to: loginId)
        let verified = try await client.auth(
            .post, "otp/verify", project: project, json: #"{"loginId":"\#(loginId)","code":"\#(code)"}"#)
        #expect(verified.status == .ok)
    }
}
