import Foundation

/// One line shown to the person on the device ("Location": "Berlin").
public struct ChallengeDetail: Codable, Sendable, Equatable {
    public var label: String
    public var value: String

    public init(label: String, value: String) {
        self.label = label
        self.value = value
    }
}
