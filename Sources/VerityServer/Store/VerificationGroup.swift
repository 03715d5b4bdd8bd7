import Foundation
import SQLKit
import VerityCore

/// Verifications grouped as they are stored: by day, channel, state and the first digits of the number (the
/// calling code and a few after it), with one destination of the group, from which the region is read.
struct VerificationGroup: Sendable, Equatable {
    var day: Int
    var channel: Channel
    var status: VerificationStatus
    var sample: String
    var count: Int
}
