import Hummingbird

/// The authenticated project as a Twilio account, and where the face's resources live.
struct TwilioAccount: Sendable {
    let project: Project
    /// `AC…`, derived from the project id.
    let sid: String

    init(_ context: VerityRequestContext) throws {
        guard let project = context.project else { throw TwilioError.authenticationFailed }
        try self.init(project: project)
    }

    init(project: Project) throws {
        guard let sid = TwilioSID.account(forProject: project.id) else { throw TwilioError.authenticationFailed }
        self.project = project
        self.sid = sid
    }
}
