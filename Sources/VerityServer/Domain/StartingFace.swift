import Foundation
import VerityCore

/// A face that records that it started a verification: the Firebase emulator's code list shows only the codes its
/// own face started, never a sign-in another face (native, Descope) started for the same project.
enum StartingFace: String, Sendable, Equatable {
    case firebase
}
