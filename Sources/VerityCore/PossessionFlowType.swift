import Foundation

/// How a possession check reaches the phone: a code typed into the app on the phone itself (`mobile`), or an
/// instant link tapped on the phone while the user waits on a desktop (`desktop`).
public enum PossessionFlowType: String, WireEnum, Sendable {
    case mobile
    case desktop
}
