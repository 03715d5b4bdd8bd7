import Foundation
import VerityCore

/// The screens a possession check may need; the app implements them and ``VerityPossession`` calls them in order.
public protocol PossessionUI: Sendable {
    /// Asks for the phone number when the backend gave none; `error` says why the last one was refused. Return nil
    /// to cancel.
    func phoneNumber(error: PossessionError?) async -> String?

    /// Shows the code screen; `error` says what went wrong with the last action (a wrong code, a limit).
    func codeAction(state: PossessionState, error: PossessionError?) async -> PossessionCodeAction

    /// Shows "we texted you a link" on the desktop; called again after each wait that ended without confirmation.
    func linkAction(state: PossessionState, error: PossessionError?) async -> PossessionLinkAction
}
