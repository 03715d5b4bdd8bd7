import Foundation
import Logging
import VerityCore

/// A user's validated login ids: at most one email address and one phone number, normalised as verifications
/// normalise destinations.
struct UserLogins: Sendable, Equatable {
    /// The normalised email address (domain lowercased), if any.
    var email: String?
    /// The E.164 phone number, if any.
    var phone: String?

    /// No login ids: a user a face knows only by its own identity (a Twilio entity's passkeys).
    static let none = UserLogins()

    private init() {}

    init(_ loginIds: [String]) throws {
        guard (1...2).contains(loginIds.count) else {
            throw VerityError(
                .invalidLoginId, "Give one or two login ids: an email address, an E.164 phone number, or one of each.")
        }
        for loginId in loginIds {
            switch try Self.destination(loginId) {
            case .email(let address):
                guard email == nil else {
                    throw VerityError(.invalidLoginId, "A user has at most one email address.")
                }
                email = address.address
            case .phone(let number):
                guard phone == nil else {
                    throw VerityError(.invalidLoginId, "A user has at most one phone number.")
                }
                phone = number.e164
            }
        }
    }

    /// The normalised login ids, email first.
    var ids: [String] { [email, phone].compactMap { $0 } }

    /// What uniqueness is decided on.
    var keys: [String] { [email?.lowercased(), phone].compactMap { $0 } }

    /// The uniqueness key of one login id: the E.164 number, or the normalised email address lowercased.
    static func key(for loginId: String) throws -> String {
        try destination(loginId).key
    }

    /// Whether `loginId` is one of `loginIds`, compared by ``key(for:)``: a phone number however it is written, an
    /// email address in any letter case. A login id that is not valid is none of them.
    static func contains(_ loginId: String, in loginIds: [String]) -> Bool {
        guard let key = try? key(for: loginId) else { return false }
        return loginIds.contains { (try? Self.key(for: $0)) == key }
    }

    /// An id with an `@` is an email address; anything else must be an E.164 phone number.
    private static func destination(_ loginId: String) throws -> Destination {
        guard loginId.utf8.count <= 1024 else {
            throw VerityError(.invalidLoginId, "A login id may have at most 1024 bytes.")
        }
        return try Destination(loginId: loginId)
    }
}
