// The names the documentation's code listings take from their surroundings: what an app has at hand where the listing
// would sit (a token from its backend, the VerityPush it keeps, its own views). Declared once here, by hand; each is
// main-actor isolated, as app code is, and never runs.
import Foundation
import SwiftUI
import UIKit
import UserNotifications
import VerityCore
import VerityKit

private func unused() -> Never {
    fatalError("listing context: type-checking only")
}

@MainActor public var token: String { unused() }
@MainActor public var apnsToken: String { unused() }
@MainActor public var apnsTokenHex: String { unused() }
@MainActor public var typedCode: String { unused() }
@MainActor public var secondCode: String { unused() }
@MainActor public var serverURL: URL { unused() }
@MainActor public var tokenFromBackend: String { unused() }
@MainActor public var id: String { unused() }
@MainActor public var configuration: VerityConfiguration { unused() }
@MainActor public var store: any SecureStore { unused() }
@MainActor public var push: VerityPush { unused() }
@MainActor public var verity: VeritySession { unused() }
@MainActor public var factor: PushFactor { unused() }
@MainActor public var userInfo: [AnyHashable: Any] { unused() }
@MainActor public var response: UNNotificationResponse { unused() }
@MainActor public var deviceToken: Data { unused() }
@MainActor public var myScreens: MyScreens { unused() }
@MainActor public var backend: Backend { unused() }
@MainActor public var api: API { unused() }
@MainActor public var window: UIWindow { unused() }

@MainActor public func showOnboarding() {}
@MainActor public func showSignedIn(_ signedIn: Bool) {}
@MainActor public func consentSheet(_ challenge: DeviceChallenge) async -> RemediationDecision { .noDecision }

/// The app's possession screens.
public struct MyScreens: PossessionUI {
    public func phoneNumber(error: PossessionError?) async -> String? { nil }
    public func codeAction(state: PossessionState, error: PossessionError?) async -> PossessionCodeAction { unused() }
    public func linkAction(state: PossessionState, error: PossessionError?) async -> PossessionLinkAction { unused() }
}

/// The app's backend client.
public struct Backend: Sendable {
    /// What the backend's `POST /v1/possession` answered, as it hands it to the app.
    public func startPossession() async throws -> StartedPossession { unused() }
    public func finishPossession(correlationId: String) async throws {}
}

/// The app's API client.
public struct API: Sendable {
    public func orders(bearer: String) async throws -> [String] { [] }
}

/// The app's own views.
public struct HomeView: View {
    public init(user: User) {}
    public init(user: User, hasPushFactor: Bool) {}
    public var body: some View { Text("Home") }
}

public struct SignInView: View {
    public init(verity: VeritySession) {}
    public var body: some View { Text("Sign in") }
}
