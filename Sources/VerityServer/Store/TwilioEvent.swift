import Foundation
import SQLKit

/// A Verify Push event (`factor.verified`, `challenge.approved`, …) and its parameters, as Twilio posts them.
struct TwilioEvent: Sendable, Equatable {
    var type: String
    var params: [String: String]
}
