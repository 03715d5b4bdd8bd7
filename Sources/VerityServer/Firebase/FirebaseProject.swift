import Foundation
import VerityCore

/// A project as the Firebase face names it: the Firebase project id its ID tokens carry (`aud`, and `iss`
/// `https://securetoken.google.com/<id>`), and the public API key its apps send as `?key=`, as in a
/// `GoogleService-Info.plist`. The key is an identifier, not a secret (Google's are not either).
public struct FirebaseProject: Sendable, Equatable {
    public var projectId: String
    public var firebaseProjectId: String
    public var apiKey: String
    public var createdAt: Date
}
