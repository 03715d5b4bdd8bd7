import Observation
import VerityCore

/// A ``VeritySession``'s signed-in state, readable synchronously on the main actor and observable: a SwiftUI view
/// that reads it redraws when it changes, and `withObservationTracking` reports each change.
///
/// ```swift
/// struct AccountView: View {
///     let verity: VeritySession
///
///     var body: some View {
///         if let user = verity.state.user {
///             Text("Signed in as \(user.loginIds.first ?? user.id)")
///         } else {
///             SignInView(verity: verity)
///         }
///     }
/// }
/// ```
///
/// It holds the stored session from the moment the ``VeritySession`` is created, and follows every sign-in, refresh,
/// step-up and sign-out. The session changes on the ``VeritySession`` actor first; the state follows on the main
/// actor, before the `await` of a main-actor caller that made the change returns.
@MainActor @Observable
public final class VeritySessionState {
    /// The current session, or `nil` when no one is signed in. Its session token may have expired: call a backend
    /// with ``VeritySession/validSessionJWT()``.
    public internal(set) var session: Session?

    /// The signed-in user, as the server last described them.
    public var user: User? { session?.user }

    /// Whether someone is signed in.
    public var isSignedIn: Bool { session != nil }

    nonisolated init(session: Session?) {
        // The macro's storage: the property's setter is the main actor's, and this initializer runs anywhere.
        _session = session
    }
}
