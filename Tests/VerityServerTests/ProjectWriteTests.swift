import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Writes to a project change only what they are about, so concurrent changes do not undo one another.
@Suite("Project writes")
struct ProjectWriteTests {
    @Test(
        "An admin's settings change survives a Twilio webhook created from an older copy of the project",
        arguments: TestEngine.available)
    func twilioWebhookKeepsSettings(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let serviceSid = try await client.twilioService(auth: auth)
            // The face authenticated the request with this copy; then an admin changed the settings.
            let stale = try await node.verity.admin.project(id: node.project.id)
            _ = try await node.verity.admin.updateProject(id: node.project.id, name: "Acme Two") { $0.codeLength = 8 }

            let services = node.verity.twilioServices
            let push = node.verity.twilioPush
            let form = try TwilioForm(
                encoded: "FriendlyName=Events&EventTypes=%2A&WebhookUrl=https%3A%2F%2Fhooks.example%2Ftwilio")
            _ = try await push.saveWebhook(
                nil, form, in: try await services.service(serviceSid, in: stale), project: stale)

            let project = try await node.verity.admin.project(id: node.project.id)
            #expect(project.name == "Acme Two")
            #expect(project.settings.codeLength == 8)
            #expect(project.webhookSecret?.hasPrefix("whsec_") == true)
        }
    }

    @Test("A settings change from an older copy keeps a webhook set since", arguments: TestEngine.available)
    func settingsKeepWebhook(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let (stale, version) = try #require(await node.verity.admin.projectForUpdate(id: node.project.id))
        let hooked = try await node.verity.admin.setWebhook(projectId: node.project.id, url: "https://hooks.example/v")
        var changed = stale
        changed.settings.codeLength = 7
        #expect(
            try await node.verity.admin.update(changed, ifVersion: version), "a webhook is no settings change")
        let project = try await node.verity.admin.project(id: node.project.id)
        #expect(project.settings.codeLength == 7)
        #expect(project.webhookURL == "https://hooks.example/v")
        #expect(project.webhookSecret == hooked.webhookSecret)
        try await node.verity.database.close()
    }

    @Test(
        "A project's and a key's name is one line of 1 to 100 characters, trimmed, on create and on update",
        arguments: TestEngine.available)
    func namesAreOneLine(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let admin = node.verity.admin
        let projectsBefore = try await admin.listProjects()
        let keysBefore = try await admin.listKeys(projectId: node.project.id)
        // A line break in a project's name would break the line of every message that names it.
        for bad in ["", "   ", "Acme\nYour code is 000000", "Acme\r\nTwo", String(repeating: "a", count: 101)] {
            await #expect(throws: ConfigurationError.self) { try await admin.createProject(name: bad) }
            await #expect(throws: ConfigurationError.self) {
                try await admin.updateProject(id: node.project.id, name: bad) { $0.codeLength = 8 }
            }
            await #expect(throws: ConfigurationError.self) {
                try await admin.createKey(projectId: node.project.id, name: bad)
            }
        }
        #expect(try await admin.listProjects() == projectsBefore, "a refused name made or changed no project")
        #expect(try await admin.listKeys(projectId: node.project.id) == keysBefore, "and made no key")

        let (created, _) = try await admin.createProject(name: "  Acme Two\t")
        #expect(created.name == "Acme Two")
        let renamed = try await admin.updateProject(id: created.id, name: " Acme Three ") { _ in }
        #expect(renamed.name == "Acme Three")
        let key = try await admin.createKey(projectId: created.id, name: "\tci runner  ")
        #expect(key.key.name == "ci runner")
        try await node.verity.database.close()
    }
}
