import Foundation
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Passkey settings per project")
struct PasskeyProjectSettingsTests {
    /// The relying party the passkey tests use: `example.com`, from its web origin, user verification required.
    static let change: [ProjectSettingsChange.Setting: String] = [
        .passkeyRpId: "example.com", .passkeyRpName: "Example", .passkeyOrigins: "https://example.com",
        .passkeyUserVerification: "required",
    ]

    @Test(
        "The relying party is stored and read back on either engine, and none turns passkeys off",
        arguments: TestEngine.available)
    func storedAndReadBack(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        #expect(node.project.settings.passkeys == nil)
        let change = try ProjectSettingsChange(
            Self.change.merging([
                .passkeyOrigins: "https://example.com, https://login.example.com, https://example.com",
                .passkeyAttachment: "platform", .passkeyChallengeLifetime: "120",
            ]) { $1 })
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        let stored = try #require(try await node.verity.admin.project(id: node.project.id).settings.passkeys)
        #expect(stored.rpID == "example.com")
        #expect(stored.rpName == "Example")
        #expect(stored.origins == ["https://example.com", "https://login.example.com"])
        #expect(stored.attachment == .platform)
        #expect(stored.userVerification == .required)
        #expect(stored.residentKey == .preferred)
        #expect(stored.challengeLifetime == 120)

        let off = try ProjectSettingsChange([.passkeyRpId: "none"])
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { off.apply(to: &$0) }
        #expect(try await node.verity.admin.project(id: node.project.id).settings.passkeys == nil)
    }

    @Test("Turning passkeys on needs the name and origins with the id, and refuses foreign origins and bad words")
    func refusals() throws {
        var settings = ProjectSettings()
        try ProjectSettingsChange([.passkeyRpId: "example.com"]).apply(to: &settings)
        #expect(throws: ConfigurationError.self) { try settings.validated() }
        try ProjectSettingsChange([.passkeyRpName: "Example", .passkeyOrigins: "https://evil.com"]).apply(
            to: &settings)
        #expect(throws: ConfigurationError.self) { try settings.validated() }
        try ProjectSettingsChange([.passkeyOrigins: "https://example.com"]).apply(to: &settings)
        #expect(try settings.validated().passkeys?.origins == ["https://example.com"])
        #expect(throws: ConfigurationError.self) { try ProjectSettingsChange([.passkeyUserVerification: "always"]) }
        #expect(throws: ConfigurationError.self) { try ProjectSettingsChange([.passkeyAttestation: "indirect"]) }
    }
}
