import Foundation
import NIOConcurrencyHelpers
import VerityCore

/// Matches phone numbers against ``RefusedNumberTypes``. A region's patterns are compiled once, the first time a number
/// of that region is judged, so a send pays for one match and never for compiling, nor for regions it does not reach.
final class RefusedRanges: Sendable {
    /// Each region's patterns as one expression; nil for a region whose patterns do not compile (the tests check that
    /// every region's do).
    private let compiled = NIOLockedValueBox<[String: NSRegularExpression?]>([:])

    /// Whether `number`'s national number starts with a number of a refused range of its region. Leading digits are
    /// enough: the numbering-plan table admits lengths libphonenumber does not, and a digit more or less must not get a
    /// number of a premium-rate range through.
    func contains(_ number: PhoneNumber) -> Bool {
        guard let types = RefusedNumberTypes.byRegion[number.regionCode],
            let expression = expression(for: number.regionCode, types)
        else { return false }
        let national = number.nationalNumber
        let range = NSRange(national.startIndex..., in: national)
        return expression.firstMatch(in: national, options: .anchored, range: range) != nil
    }

    private func expression(for region: String, _ types: RefusedNumberTypes) -> NSRegularExpression? {
        compiled.withLockedValue { cache in
            if let made = cache[region] { return made }
            let made = Self.compile(types)
            cache[region] = made
            return made
        }
    }

    /// One expression for all of a region's refused ranges.
    static func compile(_ types: RefusedNumberTypes) -> NSRegularExpression? {
        let alternatives = [types.premiumRate, types.sharedCost, types.personalNumber].compactMap { $0 }
        return try? NSRegularExpression(pattern: alternatives.map { "(?:\($0))" }.joined(separator: "|"))
    }
}
