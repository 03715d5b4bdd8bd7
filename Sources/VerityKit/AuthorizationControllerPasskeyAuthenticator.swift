#if canImport(AuthenticationServices) && !os(watchOS) && !os(tvOS)
    import AuthenticationServices
    import Foundation

    /// The ``PasskeyAuthenticator`` of Apple's AuthenticationServices: an `ASAuthorizationController` with requests of
    /// `ASAuthorizationPlatformPublicKeyCredentialProvider`, presented over the app's window.
    public struct AuthorizationControllerPasskeyAuthenticator: PasskeyAuthenticator {
        private let presentationAnchor: @MainActor @Sendable () -> ASPresentationAnchor

        /// Creates the authenticator.
        ///
        /// - Parameter presentationAnchor: The window the system's sheet is presented over.
        public init(presentationAnchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor) {
            self.presentationAnchor = presentationAnchor
        }

        /// Creates a passkey with the system's sheet.
        public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
            try await Self.perform(
                relyingPartyId: request.relyingPartyId, anchor: presentationAnchor, isAutoFill: false
            ) { provider in
                let registration = provider.createCredentialRegistrationRequest(
                    challenge: request.challenge, name: request.userName, userID: request.userId)
                registration.displayName = request.displayName
                registration.userVerificationPreference = Self.preference(request.userVerification)
                registration.attestationPreference = ASAuthorizationPublicKeyCredentialAttestationKind(
                    rawValue: request.attestation)
                registration.excludedCredentials = request.excludedCredentialIds.map {
                    ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
                }
                return registration
            } answer: { credential in
                guard let registration = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
                    let attestationObject = registration.rawAttestationObject
                else { throw PasskeyError.failed("the platform answered no passkey registration") }
                return PasskeyRegistration(
                    credentialId: registration.credentialID, clientDataJSON: registration.rawClientDataJSON,
                    attestationObject: attestationObject, isPlatformAttachment: registration.attachment == .platform)
            }
        }

        /// Signs in with a passkey, by the system's sheet or from AutoFill.
        public func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
            try await Self.perform(
                relyingPartyId: request.relyingPartyId, anchor: presentationAnchor, isAutoFill: request.isAutoFill
            ) { provider in
                let assertion = provider.createCredentialAssertionRequest(challenge: request.challenge)
                assertion.userVerificationPreference = Self.preference(request.userVerification)
                assertion.allowedCredentials = request.allowedCredentialIds.map {
                    ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
                }
                return assertion
            } answer: { credential in
                guard let assertion = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
                    throw PasskeyError.failed("the platform answered no passkey assertion")
                }
                return PasskeyAssertion(
                    credentialId: assertion.credentialID, clientDataJSON: assertion.rawClientDataJSON,
                    authenticatorData: assertion.rawAuthenticatorData, signature: assertion.signature,
                    userHandle: assertion.userID ?? Data(), isPlatformAttachment: assertion.attachment == .platform)
            }
        }

        private static func preference(_ value: PasskeyUserVerification)
            -> ASAuthorizationPublicKeyCredentialUserVerificationPreference
        {
            ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: value.rawValue)
        }

        /// Runs one request on an authorization controller and turns its credential into `Output` on the main actor,
        /// where the controller calls its delegate.
        @MainActor
        private static func perform<Output: Sendable>(
            relyingPartyId: String, anchor: @MainActor @Sendable () -> ASPresentationAnchor, isAutoFill: Bool,
            request: (ASAuthorizationPlatformPublicKeyCredentialProvider) -> ASAuthorizationRequest,
            answer: @escaping @MainActor (any ASAuthorizationCredential) throws -> Output
        ) async throws -> Output {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: relyingPartyId)
            let controller = ASAuthorizationController(authorizationRequests: [request(provider)])
            let delegate = PasskeyControllerDelegate(controller: controller, anchor: anchor(), answer: answer)
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    delegate.wait(with: continuation)
                    #if os(macOS)
                        controller.performRequests()
                    #else
                        if isAutoFill {
                            controller.performAutoFillAssistedRequests()
                        } else {
                            controller.performRequests()
                        }
                    #endif
                }
            } onCancel: {
                Task { @MainActor in delegate.cancel() }
            }
        }
    }

    /// Receives the controller's answer and hands it to the waiting task. The controller holds its delegate weakly, so
    /// the delegate holds itself until the answer comes.
    @MainActor
    private final class PasskeyControllerDelegate<Output: Sendable>: NSObject, ASAuthorizationControllerDelegate,
        ASAuthorizationControllerPresentationContextProviding
    {
        private var continuation: CheckedContinuation<Output, any Error>?
        private var keptAlive: PasskeyControllerDelegate<Output>?
        private let controller: ASAuthorizationController
        private let anchor: ASPresentationAnchor
        private let answer: @MainActor (any ASAuthorizationCredential) throws -> Output

        init(
            controller: ASAuthorizationController, anchor: ASPresentationAnchor,
            answer: @escaping @MainActor (any ASAuthorizationCredential) throws -> Output
        ) {
            self.controller = controller
            self.anchor = anchor
            self.answer = answer
            super.init()
            controller.delegate = self
            controller.presentationContextProvider = self
        }

        /// Cancels the request: the controller then answers `canceled`.
        func cancel() {
            controller.cancel()
        }

        func wait(with continuation: CheckedContinuation<Output, any Error>) {
            self.continuation = continuation
            keptAlive = self
        }

        private func finish(_ result: Result<Output, any Error>) {
            continuation?.resume(with: result)
            continuation = nil
            keptAlive = nil
        }

        func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
            anchor
        }

        func authorizationController(
            controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
        ) {
            finish(Result { try answer(authorization.credential) })
        }

        func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
            let failure: PasskeyError
            switch (error as? ASAuthorizationError)?.code {
            case .canceled?: failure = .cancelled
            case .matchedExcludedCredential?: failure = .alreadyRegistered
            default: failure = .failed(error.localizedDescription)
            }
            finish(.failure(failure))
        }
    }
#endif
