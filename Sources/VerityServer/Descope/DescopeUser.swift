import Foundation
import HTTPTypes
import Hummingbird
import VerityCore

/// Descope's user object (`ResponseUser`), with every key descope-swift requires.
enum DescopeUser {
    static func json(_ user: User) -> JSONValue {
        let email = user.loginIds.first { $0.contains("@") }
        let phone = user.loginIds.first { $0.hasPrefix("+") }
        return .object([
            "userId": .string(user.id), "loginIds": .array(user.loginIds.map(JSONValue.string)),
            "externalIds": .array(user.loginIds.map(JSONValue.string)),
            "status": .string(user.disabled ? "disabled" : "enabled"),
            "createdTime": .integer(Int64(user.createdAt.timeIntervalSince1970)),
            "email": .string(email ?? ""), "verifiedEmail": .bool(email != nil),
            "phone": .string(phone ?? ""), "verifiedPhone": .bool(phone != nil),
            "name": .string(user.displayName ?? ""), "givenName": .string(""), "middleName": .string(""),
            "familyName": .string(""), "picture": .string(""),
            "roleNames": .array(user.roles.map(JSONValue.string)), "userTenants": .array([]),
            "customAttributes": .object(user.customClaims), "ssoAppIds": .array([]),
            "webauthn": .bool(false), "password": .bool(false), "TOTP": .bool(false), "OAuth": .object([:]),
            "SAML": .bool(false), "SCIM": .bool(false), "push": .bool(false), "test": .bool(false),
            "editable": .bool(true),
        ])
    }
}
