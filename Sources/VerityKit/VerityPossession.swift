import Foundation
import VerityCore

/// Runs a backend-started possession check with one call: `authenticate(authToken:carrierAuthorizationUrl:ui:)`.
///
/// The backend calls `POST /v1/possession` and hands the `authToken` to the app. The app calls
/// ``authenticate(authToken:carrierAuthorizationUrl:ui:)`` with its screens; on a phone (`mobile`) the user gets a code by SMS and may
/// resend it (3 times), enter it again after a wrong one (3 times) or change the number (3 times); on a desktop
/// (`desktop`) the user taps a link texted to their phone while the desktop waits. When it returns, the app tells
/// its backend, which asks `POST /v1/possession/{correlationId}/validate` for the verdict (the app never decides).
///
/// ```swift
/// let possession = VerityPossession(configuration: VerityConfiguration(baseURL: serverURL))
/// let outcome = try await possession.authenticate(authToken: tokenFromBackend, ui: myScreens)
/// try await backend.finishPossession(correlationId: outcome.correlationId)
/// ```
///
/// With ``CarrierCheckOptions``, a phone flow the backend started with a number on a project with the carrier check
/// on first tries the carrier check: the backend hands the app the start's `carrierAuthorizationUrl` with the
/// `authToken`, the app passes it to ``authenticate(authToken:carrierAuthorizationUrl:ui:)``, and the operator's page
/// is opened over mobile data; its redirects end on the server's `GET /v1/carrier-check/callback`, where the operator
/// confirms the number without any code. When there is no mobile-data path, the step times out, or the operator does
/// not confirm the number (the flow's `carrierCheck` says why), the code is sent as usual.
public struct VerityPossession: Sendable {
    /// How long one wait for an instant link lasts at most, in seconds (the server's limit).
    public static let maxWait = 60
    /// Seconds a wait request may take beyond the wait itself before it times out (the network, a busy server).
    static let waitMargin: TimeInterval = 15

    private let client: VerityAPIClient
    private let appVerification: VerityAppVerification?
    private let carrier: CarrierFrontChannel?
    private let logger: VerityLogger

    /// Creates the runner.
    ///
    /// - Parameters:
    ///   - configuration: The server's base URL.
    ///   - transport: Sends the HTTP requests.
    ///   - logger: Receives diagnostic messages, which never contain tokens, codes or numbers.
    ///   - appVerification: Proves that code requests come from this app, for projects that require it.
    ///   - carrierCheck: Turns on the carrier check, tried before the code on a phone; `nil` for the code only.
    public init(
        configuration: VerityConfiguration, transport: any Transport = URLSessionTransport(),
        logger: VerityLogger = .disabled, appVerification: VerityAppVerification? = nil,
        carrierCheck: CarrierCheckOptions? = nil
    ) {
        client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.appVerification = appVerification
        carrier = carrierCheck.map { CarrierFrontChannel(options: $0, serverURL: configuration.baseURL) }
        self.logger = logger
    }

    /// Runs the check the auth token names until it succeeds or ends.
    ///
    /// - Parameters:
    ///   - authToken: The `authToken` the backend got from `POST /v1/possession`.
    ///   - carrierAuthorizationUrl: The `carrierAuthorizationUrl` the backend got with it, when the project has the
    ///     carrier check on; opened over mobile data when this runner has ``CarrierCheckOptions``.
    ///   - ui: The app's screens.
    /// - Returns: The finished flow (`status` `succeeded`); the backend validates it.
    /// - Throws: ``PossessionError`` when the check ends without success (cancelled, expired, failed, finished
    ///   before).
    public func authenticate(authToken: String, carrierAuthorizationUrl: URL? = nil, ui: some PossessionUI)
        async throws -> PossessionState
    {
        guard let correlationId = StartedPossession.correlationId(inAuthToken: authToken) else {
            throw PossessionError.invalidToken
        }
        let flow = Flow(
            client: client, token: authToken, correlationId: correlationId, appVerification: appVerification)
        var state = try await flow.call(.get, "")
        switch state.status {
        case .succeeded, .failed: throw PossessionError.alreadyFinished
        case .expired: throw PossessionError.expired
        default: break
        }
        if let carrier, let carrierAuthorizationUrl, state.flow == .mobile, state.status == .created,
            state.carrierCheck == .pending,
            let confirmed = try await confirmByCarrier(flow, carrier, carrierAuthorizationUrl)
        {
            return confirmed
        }
        state = try await flow.start(state, ui: ui)
        // A desktop flow for a test number succeeds at link/start: nothing is sent and the link counts as opened.
        if state.status == .succeeded { return state }
        return state.flow == .mobile ? try await runCode(flow, state, ui: ui) : try await runLink(flow, state, ui: ui)
    }

    /// The carrier check: the flow, succeeded, when the operator confirmed the number; `nil` to send the code.
    private func confirmByCarrier(_ flow: Flow, _ carrier: CarrierFrontChannel, _ url: URL) async throws
        -> PossessionState?
    {
        do {
            try await carrier.open(url)
        } catch is CancellationError {
            throw PossessionError.cancelled
        } catch {
            logger.log(.info, "the carrier check did not complete (\(Self.describe(error))); sending a code")
            return nil
        }
        let state = try await flow.call(.get, "")
        switch state.status {
        case .succeeded: return state
        case .expired: throw PossessionError.expired
        default:
            let reason = state.carrierCheck?.rawValue ?? "unknown"
            logger.log(.info, "the operator did not confirm the number (\(reason)); sending a code")
            return nil
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as CarrierCheckError: "\(error)"
        case let error as VerityKitError: error.problem?.code ?? error.code
        default: "unknown"
        }
    }

    private func runCode(_ flow: Flow, _ state: PossessionState, ui: some PossessionUI) async throws
        -> PossessionState
    {
        try await loop(state, ask: ui.codeAction) { action, state in
            switch action {
            case .submit(let code):
                if state.status == .otpWrong { _ = try await flow.call(.post, "/otp/retry") }
                return try await flow.call(.post, "/otp/finish", body: PossessionCodeRequest(code: code))
            case .resend: return try await flow.call(.post, "/otp/resend")
            case .resendBy(let channel):
                return try await flow.call(.post, "/otp/resend", body: PossessionResendRequest(channel: channel))
            case .changeNumber(let number): return try await flow.changeNumber(to: number)
            case .cancel: throw PossessionError.cancelled
            }
        }
    }

    private func runLink(_ flow: Flow, _ state: PossessionState, ui: some PossessionUI) async throws
        -> PossessionState
    {
        try await loop(state, ask: ui.linkAction) { action, _ in
            switch action {
            case .wait(let seconds):
                let wait = min(max(seconds, 1), Self.maxWait)
                // The server holds the request up to `wait` seconds: it must not time out before (URLSessionTransport's
                // default is 30 s).
                let state = try await flow.call(
                    .get, "", query: [URLQueryItem(name: "wait", value: String(wait))],
                    timeout: TimeInterval(wait) + Self.waitMargin)
                switch state.status {
                case .expired: throw PossessionError.expired
                case .failed: throw PossessionError.alreadyFinished
                default: return state
                }
            case .resend: return try await flow.call(.post, "/link/resend")
            case .changeNumber(let number): return try await flow.changeNumber(to: number)
            case .cancel: throw PossessionError.cancelled
            }
        }
    }

    /// Asks the UI for an action and performs it until the check succeeds; a refusal the user can recover from goes
    /// to the next question, the others end the check.
    private func loop<Action>(
        _ state: PossessionState, ask: (PossessionState, PossessionError?) async -> Action,
        perform: (Action, PossessionState) async throws -> PossessionState
    ) async throws -> PossessionState {
        var state = state
        var error: PossessionError?
        while true {
            let action = await ask(state, error)
            do {
                state = try await perform(action, state)
                if state.status == .succeeded { return state }
                error = nil
            } catch let failure as PossessionError where !failure.endsCheck {
                error = failure
                if case .wrongCode = failure { state.status = .otpWrong }
            }
        }
    }

    /// One flow's requests, with its token.
    private struct Flow: Sendable {
        let client: VerityAPIClient
        let token: String
        let correlationId: String
        let appVerification: VerityAppVerification?

        /// Sends the first code or link, asking for the number when the backend gave none (again while it is refused).
        func start(_ state: PossessionState, ui: some PossessionUI) async throws -> PossessionState {
            guard state.status == .created else { return state }
            let path = state.flow == .mobile ? "/otp/start" : "/link/start"
            guard state.phoneNumberNeeded else { return try await call(.post, path, body: PossessionPhoneRequest()) }
            var error: PossessionError?
            while true {
                guard let number = await ui.phoneNumber(error: error) else { throw PossessionError.cancelled }
                do {
                    return try await call(.post, path, body: PossessionPhoneRequest(phoneNumber: number))
                } catch let failure as PossessionError where failure == .invalidPhoneNumber {
                    error = failure
                }
            }
        }

        func changeNumber(to number: String) async throws -> PossessionState {
            try await call(.post, "/otp/change-number", body: PossessionPhoneRequest(phoneNumber: number))
        }

        func call(
            _ method: TransportRequest.Method, _ path: String, body: (some Encodable & Sendable)? = nil as String?,
            query: [URLQueryItem] = [], timeout: TimeInterval? = nil
        ) async throws -> PossessionState {
            let failure: PossessionError
            do {
                return try await send(method, path, body: body, query: query, timeout: timeout)
            } catch let error as VerityKitError {
                failure = PossessionError(error)
            }
            guard failure == .stepOutOfOrder, !path.isEmpty else { throw failure }
            // The server answers a step on a finished flow and a step out of turn alike; the flow's state tells which.
            // A flow that succeeded meanwhile (the link was confirmed while the user asked for a resend) succeeded.
            guard let state = try? await call(.get, "") else { throw failure }
            switch state.status {
            case .succeeded: return state
            case .failed: throw PossessionError.alreadyFinished
            case .expired: throw PossessionError.expired
            default: throw failure
            }
        }

        /// One request; a step that sends a code carries the app's proof, and when the project wants a new one it is
        /// fetched and the step sent again.
        private func send(
            _ method: TransportRequest.Method, _ path: String, body: (some Encodable & Sendable)?,
            query: [URLQueryItem], timeout: TimeInterval?
        ) async throws -> PossessionState {
            let encoded = try body.map(VerityAPIClient.encode)
            // Only the steps (POST) may send a code; reading the flow's state needs no proof.
            return try await VerityAppVerification.withProof(from: method == .post ? appVerification : nil) { proof in
                let response = try await client.send(
                    method, "v1/possession/\(correlationId)\(path)", query: query, body: encoded,
                    headers: proof.map { [AuthHeaders.appVerification: $0] } ?? [:], bearerToken: token,
                    timeout: timeout)
                return try client.decode(PossessionState.self, from: response, status: 200)
            }
        }
    }
}
