import Foundation
import VerityCore

/// What the user chose on the code screen of a possession check.
public enum PossessionCodeAction: Sendable, Equatable {
    /// Check this code.
    case submit(code: String)
    /// Send the code again.
    case resend
    /// Send the same code again by another phone channel: `voice` (a call that says it) or `whatsapp`, for a person
    /// whose SMS does not arrive.
    case resendBy(Channel)
    /// Prove another number instead (a new code goes to it).
    case changeNumber(String)
    /// Stop the check.
    case cancel
}

/// What the user chose while an instant link waits to be tapped on the phone.
public enum PossessionLinkAction: Sendable, Equatable {
    /// Keep waiting for the link to be confirmed (up to `seconds`, then ask again).
    case wait(seconds: Int)
    /// Send the link again.
    case resend
    /// Send a link to another number.
    case changeNumber(String)
    /// Stop the check.
    case cancel
}

/// Why a step of a possession check failed, for the UI to show. ``VerityPossession`` hands these to the next UI
/// step, so the user can try again; only what ends the check is thrown.
public enum PossessionError: Error, Sendable, Equatable {
    /// The code was wrong; `retriesLeft` more entries are allowed.
    case wrongCode(retriesLeft: Int)
    /// The phone number is not valid (or not allowed for the project).
    case invalidPhoneNumber
    /// The code expired; resend it.
    case codeExpired
    /// The flow allows no more resends.
    case resendLimitReached
    /// The flow allows no more code entries; the check failed.
    case retryLimitReached
    /// The flow allows no more number changes.
    case numberChangeLimitReached
    /// The check's time ran out: the backend must start a new one.
    case expired
    /// The check is already finished (succeeded or failed) and cannot run again.
    case alreadyFinished
    /// The server refused the step in the flow's current state (another request moved the flow on); the user may
    /// choose another action.
    case stepOutOfOrder
    /// The auth token is not the one of a check the server knows (malformed, forged, or of another flow): the
    /// backend must start a new check.
    case invalidToken
    /// Too many codes or links went to this number or its neighbours for now; the user may try again later.
    case rateLimited
    /// The user cancelled.
    case cancelled
    /// Anything else: the underlying error.
    case other(VerityKitError)

    /// Reads what a server refusal means for the user.
    init(_ error: VerityKitError) {
        switch error.serverErrorCode {
        case .wrongCode?: self = .wrongCode(retriesLeft: error.problem?.remainingAttempts ?? 0)
        case .invalidPhoneNumber?, .phoneNumberRequired?, .countryNotAllowed?, .premiumRateNumber?:
            self = .invalidPhoneNumber
        case .verificationNotFound?: self = .codeExpired
        case .resendLimitReached?: self = .resendLimitReached
        case .retryLimitReached?: self = .retryLimitReached
        case .numberChangeLimitReached?: self = .numberChangeLimitReached
        case .possessionExpired?: self = .expired
        case .unauthorized?: self = .invalidToken
        case .stepOutOfOrder?: self = .stepOutOfOrder
        case .rateLimited?: self = .rateLimited
        default: self = .other(error)
        }
    }

    /// Whether the check cannot go on after this error.
    public var endsCheck: Bool {
        switch self {
        case .retryLimitReached, .expired, .alreadyFinished, .invalidToken, .cancelled, .other: true
        default: false
        }
    }

    /// The stable name of this kind of error, for logs and analytics (`wrong_code`, `step_out_of_order`, …); it
    /// never changes meaning.
    public var code: String {
        switch self {
        case .wrongCode: "wrong_code"
        case .invalidPhoneNumber: "invalid_phone_number"
        case .codeExpired: "code_expired"
        case .resendLimitReached: "resend_limit_reached"
        case .retryLimitReached: "retry_limit_reached"
        case .numberChangeLimitReached: "number_change_limit_reached"
        case .expired: "expired"
        case .alreadyFinished: "already_finished"
        case .stepOutOfOrder: "step_out_of_order"
        case .invalidToken: "invalid_token"
        case .rateLimited: "rate_limited"
        case .cancelled: "cancelled"
        case .other: "other"
        }
    }
}

/// The screens a possession check may need; the app implements them and ``VerityPossession`` calls them in order.
public protocol PossessionUI: Sendable {
    /// Asks for the phone number when the backend gave none; `error` says why the last one was refused. Return nil
    /// to cancel.
    func phoneNumber(error: PossessionError?) async -> String?

    /// Shows the code screen; `error` says what went wrong with the last action (a wrong code, a limit).
    func codeAction(state: PossessionState, error: PossessionError?) async -> PossessionCodeAction

    /// Shows "we texted you a link" on the desktop; called again after each wait that ended without confirmation.
    func linkAction(state: PossessionState, error: PossessionError?) async -> PossessionLinkAction
}

/// Runs a backend-started possession check with one call: `authenticate(authToken:ui:)`.
///
/// The backend calls `POST /v1/possession` and hands the `authToken` to the app. The app calls
/// ``authenticate(authToken:ui:)`` with its screens; on a phone (`mobile`) the user gets a code by SMS and may
/// resend it (3 times), enter it again after a wrong one (3 times) or change the number (3 times); on a desktop
/// (`desktop`) the user taps a link texted to their phone while the desktop waits. When it returns, the app tells
/// its backend, which asks `POST /v1/possession/{correlationId}/validate` for the verdict (the app never decides).
///
/// ```swift
/// let possession = VerityPossession(configuration: VerityConfiguration(baseURL: serverURL))
/// let outcome = try await possession.authenticate(authToken: tokenFromBackend, ui: myScreens)
/// try await backend.finishPossession(correlationId: outcome.correlationId)
/// ```
public struct VerityPossession: Sendable {
    /// How long one wait for an instant link lasts at most, in seconds (the server's limit).
    public static let maxWait = 60
    /// Seconds a wait request may take beyond the wait itself before it times out (the network, a busy server).
    static let waitMargin: TimeInterval = 15

    private let client: VerityAPIClient
    private let appVerification: VerityAppVerification?

    /// Creates the runner.
    ///
    /// - Parameters:
    ///   - configuration: The server's base URL.
    ///   - transport: Sends the HTTP requests.
    ///   - logger: Receives diagnostic messages, which never contain tokens, codes or numbers.
    ///   - appVerification: Proves that code requests come from this app, for projects that require it.
    public init(
        configuration: VerityConfiguration, transport: any Transport = URLSessionTransport(),
        logger: VerityLogger = .disabled, appVerification: VerityAppVerification? = nil
    ) {
        client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.appVerification = appVerification
    }

    /// Runs the check the auth token names until it succeeds or ends.
    ///
    /// - Parameters:
    ///   - authToken: The `authToken` the backend got from `POST /v1/possession`.
    ///   - ui: The app's screens.
    /// - Returns: The finished flow (`status` `succeeded`); the backend validates it.
    /// - Throws: ``PossessionError`` when the check ends without success (cancelled, expired, failed, finished
    ///   before).
    public func authenticate(authToken: String, ui: some PossessionUI) async throws -> PossessionState {
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
        state = try await flow.start(state, ui: ui)
        // A desktop flow for a test number succeeds at link/start: nothing is sent and the link counts as opened.
        if state.status == .succeeded { return state }
        return state.flow == .mobile ? try await runCode(flow, state, ui: ui) : try await runLink(flow, state, ui: ui)
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
