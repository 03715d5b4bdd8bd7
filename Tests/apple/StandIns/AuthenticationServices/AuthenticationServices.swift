// A stand-in for the passkey part of Apple's AuthenticationServices framework, for type-checking VerityKit's
// Apple-only code on Linux. It never ships and never runs. Each declaration is transcribed from the Swift declaration
// Apple's documentation shows (developer.apple.com/documentation/authenticationservices/<symbol>), named above it;
// only what VerityKit uses is here. The classes are Objective-C classes, neither `Sendable` nor isolated to an actor;
// the two protocols the controller calls back are `@MainActor`. Objective-C `optional` protocol requirements cannot
// be declared without Objective-C, so the delegate's methods have empty default implementations instead, which leaves
// conformers free to implement either, as `optional` does.
import Foundation
import UIKit

private func standIn() -> Never {
    fatalError("AuthenticationServices stand-in: type-checking only")
}

// https://developer.apple.com/documentation/authenticationservices/aspresentationanchor:
// `typealias ASPresentationAnchor = UIWindow` (on iOS and visionOS)
public typealias ASPresentationAnchor = UIWindow

// https://developer.apple.com/documentation/authenticationservices/asauthorizationerror: `struct ASAuthorizationError`,
// with https://developer.apple.com/documentation/authenticationservices/asauthorizationerror/code:
// `enum Code: Int, @unchecked Sendable`
public struct ASAuthorizationError: CustomNSError, Hashable, Error {
    public enum Code: Int, @unchecked Sendable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        case matchedExcludedCredential = 1006
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
    public static var errorDomain: String { "com.apple.AuthenticationServices.AuthorizationError" }
    public var errorCode: Int { code.rawValue }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationcredential:
// `protocol ASAuthorizationCredential: NSCopying, NSSecureCoding, NSObjectProtocol`
public protocol ASAuthorizationCredential: NSObjectProtocol {}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationprovider:
// `protocol ASAuthorizationProvider: NSObjectProtocol`
public protocol ASAuthorizationProvider: NSObjectProtocol {}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationrequest:
// `class ASAuthorizationRequest: NSObject`
open class ASAuthorizationRequest: NSObject {}

// https://developer.apple.com/documentation/authenticationservices/asauthorization: `class ASAuthorization: NSObject`
open class ASAuthorization: NSObject {
    // https://developer.apple.com/documentation/authenticationservices/asauthorization/credential:
    // `var credential: any ASAuthorizationCredential { get }`
    open var credential: any ASAuthorizationCredential { standIn() }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationpublickeycredentialuserverificationpreference:
// `struct ASAuthorizationPublicKeyCredentialUserVerificationPreference`, `Hashable, RawRepresentable,
// @unchecked Sendable`, with `init(rawValue: String)` and `static let required, preferred, discouraged`
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: Hashable, RawRepresentable,
    @unchecked Sendable
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let required = Self(rawValue: "required")
    public static let preferred = Self(rawValue: "preferred")
    public static let discouraged = Self(rawValue: "discouraged")
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationpublickeycredentialattestationkind:
// `struct ASAuthorizationPublicKeyCredentialAttestationKind`, `Hashable, RawRepresentable, @unchecked Sendable`, with
// `init(rawValue: String)`
public struct ASAuthorizationPublicKeyCredentialAttestationKind: Hashable, RawRepresentable, @unchecked Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none = Self(rawValue: "none")
    public static let direct = Self(rawValue: "direct")
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationpublickeycredentialattachment:
// `enum ASAuthorizationPublicKeyCredentialAttachment: Int, @unchecked Sendable`
public enum ASAuthorizationPublicKeyCredentialAttachment: Int, @unchecked Sendable {
    case platform = 0
    case crossPlatform = 1
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialdescriptor:
// `class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject`, with `init(credentialID: Data)`
open class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject {
    public init(credentialID: Data) { super.init() }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest:
// `class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest`
open class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest {
    // …/asauthorizationpublickeycredentialregistrationrequest/displayname: `var displayName: String? { get set }`
    open var displayName: String?
    // …/userverificationpreference: `var userVerificationPreference:
    // ASAuthorizationPublicKeyCredentialUserVerificationPreference { get set }`
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    // …/attestationpreference: `var attestationPreference: ASAuthorizationPublicKeyCredentialAttestationKind
    // { get set }`
    open var attestationPreference: ASAuthorizationPublicKeyCredentialAttestationKind = .none
    // https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialregistrationrequest/excludedcredentials:
    // `var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] { get set }`
    open var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialassertionrequest:
// `class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest`
open class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest {
    // …/allowedcredentials: `var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]
    // { get set }`
    open var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
    // …/userverificationpreference
    open var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialprovider:
// `class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject`, `ASAuthorizationProvider`
open class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject, ASAuthorizationProvider {
    // …/init(relyingpartyidentifier:): `init(relyingPartyIdentifier: String)`
    public init(relyingPartyIdentifier: String) { super.init() }

    // …/createcredentialregistrationrequest(challenge:name:userid:): `func createCredentialRegistrationRequest(
    // challenge: Data, name: String, userID: Data) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest`
    open func createCredentialRegistrationRequest(challenge: Data, name: String, userID: Data)
        -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest
    { standIn() }

    // …/createcredentialassertionrequest(challenge:): `func createCredentialAssertionRequest(challenge: Data) ->
    // ASAuthorizationPlatformPublicKeyCredentialAssertionRequest`
    open func createCredentialAssertionRequest(challenge: Data)
        -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest
    { standIn() }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialregistration:
// `class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject`, an `ASAuthorizationCredential`
open class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASAuthorizationCredential {
    // `var rawAttestationObject: Data? { get }`
    open var rawAttestationObject: Data? { standIn() }
    // `var rawClientDataJSON: Data { get }`
    open var rawClientDataJSON: Data { standIn() }
    // `var credentialID: Data { get }`
    open var credentialID: Data { standIn() }
    // `var attachment: ASAuthorizationPublicKeyCredentialAttachment { get }`
    open var attachment: ASAuthorizationPublicKeyCredentialAttachment { standIn() }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationplatformpublickeycredentialassertion:
// `class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject`, an `ASAuthorizationCredential`
open class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASAuthorizationCredential {
    // `var rawAuthenticatorData: Data! { get }`
    open var rawAuthenticatorData: Data! { standIn() }
    // `var signature: Data! { get }`
    open var signature: Data! { standIn() }
    // `var userID: Data! { get }`
    open var userID: Data! { standIn() }
    // `var rawClientDataJSON: Data { get }`
    open var rawClientDataJSON: Data { standIn() }
    // `var credentialID: Data { get }`
    open var credentialID: Data { standIn() }
    // `var attachment: ASAuthorizationPublicKeyCredentialAttachment { get }`
    open var attachment: ASAuthorizationPublicKeyCredentialAttachment { standIn() }
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationcontrollerdelegate:
// `@MainActor protocol ASAuthorizationControllerDelegate: NSObjectProtocol`, both methods `optional`
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    // …/authorizationcontroller(controller:didcompletewithauthorization:)
    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    // …/authorizationcontroller(controller:didcompletewitherror:)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

extension ASAuthorizationControllerDelegate {
    public func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {}
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {}
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationcontrollerpresentationcontextproviding:
// `@MainActor protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol`, with
// `func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor`
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

// https://developer.apple.com/documentation/authenticationservices/asauthorizationcontroller:
// `class ASAuthorizationController: NSObject`
open class ASAuthorizationController: NSObject {
    // …/init(authorizationrequests:): `init(authorizationRequests: [ASAuthorizationRequest])`
    public init(authorizationRequests: [ASAuthorizationRequest]) { super.init() }
    // …/delegate: `weak var delegate: (any ASAuthorizationControllerDelegate)? { get set }`
    open weak var delegate: (any ASAuthorizationControllerDelegate)?
    // …/presentationcontextprovider: `weak var presentationContextProvider: (any
    // ASAuthorizationControllerPresentationContextProviding)? { get set }`
    open weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?
    // …/performrequests(): `func performRequests()`
    open func performRequests() { standIn() }
    // …/performautofillassistedrequests(): `func performAutoFillAssistedRequests()` (iOS 16, visionOS)
    open func performAutoFillAssistedRequests() { standIn() }
    // …/cancel(): `func cancel()`
    open func cancel() { standIn() }
}
