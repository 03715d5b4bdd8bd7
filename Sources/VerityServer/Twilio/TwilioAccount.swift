import Hummingbird

/// The authenticated project as a Twilio account, and where the face's resources live.
struct TwilioAccount: Sendable {
    let project: Project
    /// `AC…`, derived from the project id.
    let sid: String

    /// The account of a call from the customer's backend. A phone's device login (user `token` with a factor's
    /// JWT) is refused here: it may only call the few routes that pass `allowingDevice`, and only for its factor.
    ///
    /// - Parameter allowingDevice: Whether the route also serves devices (factor and challenge routes).
    init(_ context: VerityRequestContext, allowingDevice: Bool = false) throws {
        guard let project = context.project, allowingDevice || context.deviceFactor == nil else {
            throw TwilioError.authenticationFailed
        }
        try self.init(project: project)
    }

    init(project: Project) throws {
        guard let sid = TwilioSID.account(forProject: project.id) else { throw TwilioError.authenticationFailed }
        self.project = project
        self.sid = sid
    }
}
