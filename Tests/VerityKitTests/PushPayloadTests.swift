import Foundation
import Testing
import VerityKit

@Suite("Push payloads")
struct PushPayloadTests {
    let push: VerityPush

    init() throws {
        push = VerityPush(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL()), transport: RecordingTransport(),
            store: InMemorySecureStore())
    }

    @Test("an APNs userInfo with an alert dictionary")
    func apnsAlertDictionary() throws {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "Sign-in request", "body": "Approve?"], "sound": "default"],
            "type": "verity.challenge", "challengeId": "chl_123", "factorId": "fac_456",
        ]
        let notification = try push.parsePushPayload(userInfo)
        #expect(
            notification
                == PushChallengeNotification(
                    challengeId: "chl_123", factorId: "fac_456", title: "Sign-in request", body: "Approve?"))
    }

    @Test("an APNs userInfo with a plain alert")
    func apnsAlertString() throws {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["alert": "Approve?", "mutable-content": 1], "type": "verity.challenge", "challengeId": "chl_1",
            "factorId": "fac_2",
        ]
        let notification = try push.parsePushPayload(userInfo)
        #expect(notification == PushChallengeNotification(challengeId: "chl_1", factorId: "fac_2", body: "Approve?"))
    }

    @Test("an FCM data message")
    func fcmData() throws {
        let data: [String: String] = [
            "type": "verity.challenge", "challengeId": "chl_abc", "factorId": "fac_def", "title": "Sign in?",
            "body": "From Berlin",
        ]
        let notification = try push.parsePushPayload(data)
        #expect(
            notification
                == PushChallengeNotification(
                    challengeId: "chl_abc", factorId: "fac_def", title: "Sign in?", body: "From Berlin"))
    }

    @Test(
        "a notification that is not Verity's is a mapping error",
        arguments: [
            [:], ["type": "chat.message", "challengeId": "chl_1", "factorId": "fac_1"],
            ["challengeId": "chl_1", "factorId": "fac_1"],
        ] as [[String: String]])
    func foreignPayload(payload: [String: String]) {
        let error = #expect(throws: VerityKitError.self) { try push.parsePushPayload(payload) }
        #expect(error?.code == "mapping")
    }

    @Test(
        "a Verity notification with bad identifiers is an input error",
        arguments: [
            ["type": "verity.challenge", "factorId": "fac_1"],
            ["type": "verity.challenge", "challengeId": "chl_1"],
            ["type": "verity.challenge", "challengeId": "chl_1/../x", "factorId": "fac_1"],
            ["type": "verity.challenge", "challengeId": "chl_1", "factorId": "usr_1"],
        ] as [[String: String]])
    func malformedPayload(payload: [String: String]) {
        let error = #expect(throws: VerityKitError.self) { try push.parsePushPayload(payload) }
        #expect(error?.code == "input")
    }

    @Test("non-string identifiers are refused")
    func nonStringIdentifiers() {
        let userInfo: [AnyHashable: Any] = ["type": "verity.challenge", "challengeId": 42, "factorId": "fac_1"]
        #expect(throws: VerityKitError.self) { try push.parsePushPayload(userInfo) }
    }
}
