import Foundation

/// The evaluated `LAContext` a ``UserVerifier`` hands to the key that signs next, so that the owner is asked once.
// @unchecked Sendable: the context is created by one verification and then only read, by one signing at a time.
final class AuthenticationContext: @unchecked Sendable, Equatable {
    let context: AnyObject

    init(_ context: AnyObject) {
        self.context = context
    }

    static func == (lhs: AuthenticationContext, rhs: AuthenticationContext) -> Bool {
        lhs === rhs
    }
}
