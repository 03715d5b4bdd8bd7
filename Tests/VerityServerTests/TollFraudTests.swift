import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// Toll fraud: calls and messages to numbers whose carrier is paid for each one. Premium-rate and shared-cost ranges
/// come from libphonenumber's metadata for every region, and a new project does not call until an operator says so.
@Suite("Toll fraud")
struct TollFraudTests {
    /// Premium-rate and shared-cost numbers of regions beyond the five the old hand-written list knew.
    static let costly = [
        "+41900123457",  // Switzerland 0900, premium rate (the number the review had called)
        "+41840123456",  // Switzerland 0840, shared cost
        "+43900123456",  // Austria 0900
        "+3290012345",  // Belgium 0900
        "+48701234567",  // Poland 70x
        "+420900123456",  // Czechia 90x
        "+4590123456",  // Denmark 90
        "+3690123456",  // Hungary 90
        "+448451234567",  // United Kingdom 084
    ]

    @Test(
        "Premium-rate and shared-cost numbers of every region are refused by SMS and call everywhere, none stored",
        arguments: TestEngine.available)
    func costlyNumbersEverywhere(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            for number in Self.costly {
                var responses = try await AbuseTests.startEverywhere(number, node: node, client: client)
                let call = try await client.startVerification(number, channel: "voice", key: node.apiKey)
                responses.append(("verifications by call", call))
                let signIn = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"\#(number)","channel":"voice"}"#)
                responses.append(("auth/otp/start by call", signIn))
                for (path, response) in responses {
                    #expect(response.status == .forbidden, "\(number) on \(path)")
                    #expect(try response.problem().code == "premium_rate_number", "\(number) on \(path)")
                }
                let check = try await client.check(to: number, code: "123456", key: node.apiKey)
                #expect(check.status == .notFound, "no verification was stored for \(number)")
            }
            // Ordinary numbers in the same countries are still called.
            for number in ["+41446681800", "+48512345678"] {
                #expect(
                    try await client.startVerification(number, channel: "voice", key: node.apiKey).status == .created)
                #expect(try await node.sender.waitForMessages(to: number).map(\.channel) == [.voice])
            }
            #expect(node.sender.messages().count == 2)
        }
    }

    @Test(
        "A new project does not call until an operator turns voice on; SMS to the same number goes meanwhile",
        arguments: TestEngine.available)
    func newProjectHasVoiceOff(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        #expect(node.project.settings.disabledChannels == [.voice])
        let jamaica = "+18765550123"
        try await node.run { client in
            let call = try await client.startVerification(jamaica, channel: "voice", key: node.apiKey)
            #expect(call.status == .forbidden)
            #expect(try call.problem().code == "channel_disabled")
            let signIn = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"\#(jamaica)","channel":"voice"}"#)
            #expect(try signIn.problem().code == "channel_disabled")
            #expect(try await client.startVerification(jamaica, key: node.apiKey).status == .created)
            #expect(try await node.sender.waitForMessages(to: jamaica).map(\.channel) == [.sms])

            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { $0.disabledChannels = [] }
            let stored = try await node.verity.admin.project(id: node.project.id)
            #expect(stored.settings.disabledChannels.isEmpty)
            #expect(try await client.startVerification(jamaica, channel: "voice", key: node.apiKey).status == .created)
            #expect(try await node.sender.waitForMessages(to: jamaica, count: 2).map(\.channel) == [.sms, .voice])
        }
    }

    @Test("The refused-range table is libphonenumber 9.0.43's, and every region's patterns compile")
    func tableVersion() {
        #expect(RefusedNumberTypes.metadataVersion == "9.0.43")
        #expect(RefusedNumberTypes.byRegion.count > 150)
        for (region, types) in RefusedNumberTypes.byRegion {
            #expect(RefusedRanges.compile(types) != nil, "\(region)'s patterns compile")
        }
    }

    @Test(
        "Known numbers are judged by their region's ranges",
        arguments: [
            // The regions the review called, and the five the old list knew.
            ("+41900123457", true), ("+41840123456", true), ("+43900123456", true), ("+3290012345", true),
            ("+48701234567", true), ("+420900123456", true), ("+4590123456", true), ("+3690123456", true),
            ("+448451234567", true), ("+19005550100", true), ("+449098790000", true), ("+448712345678", true),
            ("+447012345678", true), ("+499001234567", true), ("+4990012345678", true), ("+33899123456", true),
            ("+33810123456", true), ("+34803123456", true), ("+34901123456", true),
            // Ordinary numbers, a Jamaican one among them: +1 876 is a costly destination but not a premium range,
            // so calls there wait for the operator to turn voice on.
            ("+14155550100", false), ("+18765550123", false), ("+447700900123", false), ("+41446681800", false),
            ("+4532123456", false), ("+3612345678", false), ("+48512345678", false), ("+4915112345678", false),
        ])
    func knownNumbers(number: String, refused: Bool) throws {
        let parsed = try PhoneNumber(parsing: number)
        #expect(DestinationPolicy.isPremiumRate(parsed) == refused, "\(number) (\(parsed.regionCode))")
    }
}
