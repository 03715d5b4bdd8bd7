#if canImport(DeviceCheck)
    import DeviceCheck
    import Foundation

    /// The ``AppAttestService`` of Apple's DeviceCheck framework (`DCAppAttestService.shared`).
    ///
    /// The app needs the App Attest entitlement (`com.apple.developer.devicecheck.appattest-environment`), set to
    /// `development` or `production` as the server's project expects.
    public struct DeviceCheckAppAttestService: AppAttestService {
        /// Creates the service.
        public init() {}

        /// Whether DeviceCheck offers App Attest on this device.
        public var isSupported: Bool {
            DCAppAttestService.shared.isSupported
        }

        /// Creates a key in the Secure Enclave.
        public func generateKey() async throws -> String {
            try await mapped { try await DCAppAttestService.shared.generateKey() }
        }

        /// Asks Apple to certify the key.
        public func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
            try await mapped { try await DCAppAttestService.shared.attestKey(keyId, clientDataHash: clientDataHash) }
        }

        /// Signs with the attested key.
        public func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
            try await mapped {
                try await DCAppAttestService.shared.generateAssertion(keyId, clientDataHash: clientDataHash)
            }
        }

        /// Runs a DeviceCheck call, turning its errors into ``AppAttestError``.
        private func mapped<Value: Sendable>(_ call: () async throws -> Value) async throws -> Value {
            do {
                return try await call()
            } catch let error as DCError {
                switch error.code {
                case .featureUnsupported: throw AppAttestError.unsupported
                case .invalidKey: throw AppAttestError.invalidKey
                case .invalidInput, .serverUnavailable, .unknownSystemFailure:
                    throw AppAttestError.failed("DeviceCheck error \(error.code.rawValue)")
                @unknown default: throw AppAttestError.failed("DeviceCheck error \(error.code.rawValue)")
                }
            } catch {
                throw AppAttestError.failed(error.localizedDescription)
            }
        }
    }
#endif
