import Foundation
import NIOConcurrencyHelpers
import VerityCore

/// Where codes may go: by the channels the project sends by, to the project's countries, never to premium-rate
/// numbers, and not in bursts to neighbouring numbers. These are the defences against SMS pumping and its costlier
/// voice form (toll fraud), where an attacker has codes sent or calls made to numbers whose carrier pays them for
/// every message or minute. Calls and WhatsApp messages are held to exactly the rules of SMS.
enum DestinationPolicy {
    /// Refuses a channel the project turned off, a phone number in a region the project does not send to, and one in
    /// a premium-rate or shared-cost range.
    static func requireAllowed(_ destination: Destination, channel: Channel, in project: Project) throws {
        try requireEnabled(channel, in: project)
        try requireAllowedDestination(destination, in: project)
    }

    /// Refuses a phone number in a region the project does not send to, or in a premium-rate or shared-cost range,
    /// whatever the channel: for a number given before its channel is chosen (a possession check's).
    static func requireAllowedDestination(_ destination: Destination, in project: Project) throws {
        guard case .phone(let number) = destination else { return }
        if let allowed = project.settings.allowedCountries, !allowed.contains(number.regionCode) {
            throw VerityError(.countryNotAllowed, "This project does not send to \(number.regionCode) numbers.")
        }
        if isPremiumRate(number) {
            throw VerityError(
                .premiumRateNumber, "Codes are never sent to premium-rate or shared-cost numbers such as this one.")
        }
    }

    /// Refuses a channel the project turned off (`channel_disabled`).
    static func requireEnabled(_ channel: Channel, in project: Project) throws {
        guard project.settings.sends(by: channel) else {
            throw VerityError(.channelDisabled, "This project does not send codes by \(channel.rawValue).")
        }
    }

    /// Whether the number is in a range where the caller, or a message, pays the receiving carrier extra: one its
    /// region marks premium-rate or shared-cost in libphonenumber's metadata (``RefusedNumberTypes``), whatever the
    /// region.
    static func isPremiumRate(_ number: PhoneNumber) -> Bool {
        refusedRanges.contains(number)
    }

    /// The compiled patterns of ``RefusedNumberTypes``, each region's made the first time one of its numbers is judged.
    static let refusedRanges = RefusedRanges()

    /// The block of 1,000 numbers `number` belongs to (its E.164 form without the last three digits). Pumping
    /// attacks send to runs of sequential numbers, so starts are also limited per block.
    static func numberBlock(of number: PhoneNumber) -> String {
        String(number.e164.dropLast(3))
    }
}

extension RateLimiter {
    /// Takes the limit on starts to the 1,000-number block of a phone destination; email destinations have none.
    func takeNumberBlock(
        _ destination: Destination, _ policy: RateLimitPolicy, in project: Project, now: Date,
        in work: UnitOfWork? = nil
    ) async throws {
        guard case .phone(let number) = destination else { return }
        try await take(
            "block:\(project.id):\(DestinationPolicy.numberBlock(of: number))", policy, now: now, in: work)
    }
}
