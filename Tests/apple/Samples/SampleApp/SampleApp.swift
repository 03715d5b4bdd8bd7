// A small app on VerityKit, type-checked on Linux against the SwiftUI and UserNotifications stand-ins: what an app's
// main-actor code does with the public API (state read synchronously, actors awaited, categories registered).
import Foundation
import SwiftUI
import UserNotifications
import VerityCore
import VerityKit

@main
struct SampleApp: App {
    // swift-format-ignore: NeverForceUnwrap
    let push = VerityPush(
        configuration: VerityConfiguration(baseURL: URL(string: "https://verity.example.com")!),
        store: KeychainSecureStore(accessGroup: "TEAMID.com.example.shared", allowIphoneMigration: true),
        storageNamespace: "verity.production")
    // swift-format-ignore: NeverForceUnwrap
    let session = VeritySession(
        configuration: VerityConfiguration(baseURL: URL(string: "https://verity.example.com")!),
        projectId: "prj_123", store: KeychainSecureStore())

    init() {
        VerityNotificationCategory.register(on: UNUserNotificationCenter.current())
    }

    var body: some Scene {
        WindowGroup {
            FactorsView(push: push, session: session)
        }
    }
}

@MainActor
struct FactorsView: View {
    let push: VerityPush
    let session: VeritySession
    @State private var status = ""

    var body: some View {
        VStack {
            if let user = session.state.user {
                Text(user.id)
            }
            ForEach(push.state.factors) { factor in
                Text(factor.friendlyName)
            }
            Button("Enroll") {
                Task { await enroll() }
            }
            Text(status)
        }
        .task {
            await approvePending()
        }
    }

    func enroll() async {
        do {
            let factor = try await push.createFactor(
                enrollmentToken: "vet_token", friendlyName: "iPhone", pushPlatform: .apns, pushToken: "0a1b",
                withUserVerification: true)
            _ = try await push.verifyFactor(factor.id)
            try await push.updatePushToken(Data([0x0a, 0x1b]))
            status = "Enrolled \(factor.friendlyName)"
        } catch let error as VerityKitError {
            status = error.localizedDescription
        } catch {
            status = "\(error)"
        }
    }

    func approvePending() async {
        for factor in push.state.verifiedFactors {
            guard let challenges = try? await push.pendingChallenges(factorId: factor.id) else { continue }
            for challenge in challenges {
                _ = try? await push.resolve(challengeId: challenge.id, factorId: factor.id) { step in
                    switch step {
                    case .consent: .approve
                    case .userVerification: .proceed
                    case .message: .noDecision
                    }
                }
            }
        }
    }

    /// What the app's notification delegate does with a response: read it here, on the main actor, and hand the
    /// `Sendable` decision to the actor.
    func handle(_ response: UNNotificationResponse) async {
        guard let decision = try? NotificationResponseDecision(response) else { return }
        _ = try? await push.respond(to: decision)
    }
}
