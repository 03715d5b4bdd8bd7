#if canImport(Network)
    import Dispatch
    import Foundation
    import Network

    /// The ``CellularConnection`` of Apple's Network framework: an `NWConnection` over TLS whose parameters require
    /// the cellular interface, so that it waits, and fails, rather than use Wi-Fi.
    public struct NetworkCellularConnection: CellularConnection {
        /// Creates the connection.
        public init() {}

        /// Sends `request` over TLS on the cellular interface and reads the answer's header block.
        public func exchange(_ request: Data, host: String, port: Int) async throws -> Data {
            guard let port = UInt16(exactly: port).flatMap(NWEndpoint.Port.init(rawValue:)) else {
                throw CarrierCheckError.failed("an invalid port")
            }
            let parameters = NWParameters(tls: NWProtocolTLS.Options(), tcp: NWProtocolTCP.Options())
            parameters.requiredInterfaceType = .cellular
            let connection = NWConnection(host: NWEndpoint.Host(host), port: port, using: parameters)
            return try await withTaskCancellationHandler {
                defer { connection.cancel() }
                try await Self.ready(connection)
                try await Self.send(request, on: connection)
                return try await Self.receiveHead(on: connection)
            } onCancel: {
                connection.cancel()
            }
        }

        /// Waits until the connection is ready; a connection that waits has no path (no cellular data).
        private static func ready(_ connection: NWConnection) async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // The handler runs on the connection's serial queue, so clearing it after the first final state
                // resumes the continuation exactly once.
                connection.stateUpdateHandler = { state in
                    let outcome: Result<Void, CarrierCheckError>
                    switch state {
                    case .ready: outcome = .success(())
                    case .waiting: outcome = .failure(.noCellularPath)
                    case .failed(let error): outcome = .failure(.failed("\(error)"))
                    case .cancelled: outcome = .failure(.failed("cancelled"))
                    default: return
                    }
                    connection.stateUpdateHandler = nil
                    continuation.resume(with: outcome)
                }
                // Network.framework delivers its events on a dispatch queue of the caller's choosing; one private
                // serial queue per connection keeps them in order.
                connection.start(queue: DispatchQueue(label: "io.verity.kit.carrier"))
            }
        }

        private static func send(_ request: Data, on connection: NWConnection) async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                connection.send(
                    content: request,
                    completion: .contentProcessed { error in
                        if let error {
                            continuation.resume(throwing: CarrierCheckError.failed("\(error)"))
                        } else {
                            continuation.resume()
                        }
                    })
            }
        }

        /// Reads until the header block ends, the server closes, or ``CarrierFrontChannel/maxHeaderBytes``.
        private static func receiveHead(on connection: NWConnection) async throws -> Data {
            var received = Data()
            let end = Data("\r\n\r\n".utf8)
            while received.range(of: end) == nil, received.count < CarrierFrontChannel.maxHeaderBytes {
                let (chunk, isComplete) = try await receive(on: connection)
                received.append(chunk)
                if isComplete { break }
            }
            return received
        }

        private static func receive(on connection: NWConnection) async throws -> (Data, Bool) {
            try await withCheckedThrowingContinuation { continuation in
                connection.receive(minimumIncompleteLength: 1, maximumLength: 16 * 1024) { data, _, isComplete, error in
                    if let error {
                        continuation.resume(throwing: CarrierCheckError.failed("\(error)"))
                    } else {
                        continuation.resume(returning: (data ?? Data(), isComplete))
                    }
                }
            }
        }
    }
#endif
