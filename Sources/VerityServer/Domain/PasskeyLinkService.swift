import Foundation
import Logging
import VerityCore

/// The hosted passkey page: a backend makes a single-use link (``lifetime``) for one ceremony, the user opens it on
/// Verity's own origin, the page runs the ceremony through ``PasskeyService`` (every check is that service's), and the
/// backend reads the result by the link's id: its status and, for a sign-in, the session answer, once.
///
/// The page is on Verity's public URL, so that origin must be one of the project's passkey origins (and therefore on
/// its relying-party id): a link is refused otherwise, since no browser could answer it.
struct PasskeyLinkService: Sendable {
    /// How long a link works.
    static let lifetime: TimeInterval = 10 * 60

    private let store: PasskeyLinkStore
    private let passkeys: PasskeyService
    private let users: UserService
    /// Seals a sign-in's session answer until the backend reads it.
    private let sealer: SecretSealer
    /// The page's origin: the scheme, host and port of the public URL.
    let origin: String
    let publicURL: String
    let identifiers: Identifiers
    let clock: any TimeSource
    let logger: Logger

    init(
        store: PasskeyLinkStore, passkeys: PasskeyService, users: UserService, sealer: SecretSealer,
        publicURL: String, identifiers: Identifiers, clock: any TimeSource, logger: Logger
    ) {
        self.store = store
        self.passkeys = passkeys
        self.users = users
        self.sealer = sealer
        self.publicURL = publicURL
        self.origin = OperatorPasskeyService.relyingParty(publicURL: publicURL)?.settings.origins.first ?? publicURL
        self.identifiers = identifiers
        self.clock = clock
        self.logger = logger
    }

    /// A new link for `ceremony` (a registration needs `userId`; a sign-in without one is discoverable): its id, URL
    /// and expiry. Refused when the project has no passkeys, or its origins do not include the page's.
    func create(_ ceremony: PasskeyLink.Ceremony, userId: String?, in project: Project) async throws
        -> (link: PasskeyLink, url: String)
    {
        let relyingParty = try PasskeyService.relyingParty(of: project)
        guard relyingParty.allows(origin: origin) else {
            throw VerityError(
                .forbidden,
                "The hosted passkey page is on \(origin), which is not among the project's passkey origins: add it.")
        }
        if let userId {
            _ = try await users.user(id: userId, in: project)
        } else if ceremony == .registration {
            throw VerityError(.invalidRequest, "A registration link needs the user's id.")
        }
        let now = clock.now()
        let token = "vpk_" + identifiers.secret(bytes: 32)
        let link = PasskeyLink(
            id: identifiers.make("pkl"), projectId: project.id, userId: userId, ceremony: ceremony, status: .pending,
            createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime))
        try await store.insert(link, tokenHash: SecretHash.hex(token))
        return (link, "\(publicURL)/passkeys/\(token)")
    }

    /// The link a page token names, and its status now; nil for an unknown token.
    func link(token: String) async throws -> PasskeyLink? {
        guard let hash = Self.hash(token) else { return nil }
        return try await store.link(tokenHash: hash)
    }

    /// The options of the link's ceremony, while it is pending, for a page on `origin` (the request's `Origin`), which
    /// must be one of the project's.
    func options(token: String, origin: String?, project: Project) async throws -> PasskeyOptions {
        guard let origin, try PasskeyService.relyingParty(of: project).allows(origin: origin) else {
            throw PasskeyRefusal.originNotAllowed.verityError
        }
        let link = try await pending(token)
        switch link.ceremony {
        case .registration:
            let user = try await users.user(id: link.userId ?? "", in: project)
            return .creation(try await passkeys.registrationOptions(for: user, in: project))
        case .signIn:
            return .request(try await passkeys.authenticationOptions(userId: link.userId, in: project))
        }
    }

    /// What a ceremony asks of the browser.
    enum PasskeyOptions: Sendable {
        case creation(PasskeyCreationOptions)
        case request(PasskeyRequestOptions)
    }

    /// An answer to a link's ceremony, decoded by the face.
    enum Answer: Sendable {
        case registration(PasskeyRegistrationAnswer)
        case assertion(PasskeyAssertionAnswer)
    }

    /// An answer to the link's ceremony: checked by ``PasskeyService`` (one answer at a time per link; a sign-in's
    /// challenge is bound to the link's user, when it names one); on success the link is completed (the passkey
    /// kept, or the session answer sealed for the backend), on a refusal it stays pending for another try.
    ///
    /// A registration's passkey and the link's completion commit in one unit of work. A node that stops in the middle
    /// of an answer leaves the link `answering` for ``PasskeyLink/answerLease`` at most; a sign-in cut short after its
    /// session was written leaves a session whose tokens nobody received, which expires unused.
    func answer(token: String, _ answer: Answer, project: Project) async throws {
        let link = try await pending(token)
        let startedAt = clock.now()
        guard let hash = Self.hash(token), try await store.startAnswer(tokenHash: hash, now: startedAt) else {
            throw Self.unusable
        }
        do {
            switch (link.ceremony, answer) {
            case (.registration, .registration(let answer)):
                let user = try await users.user(id: link.userId ?? "", in: project)
                _ = try await passkeys.register(answer, friendlyName: nil, for: user, in: project) {
                    [store, clock] passkey, work in
                    guard
                        try await store.finishAnswer(
                            tokenHash: hash, startedAt: startedAt, completed: true, passkeyId: passkey.id,
                            sealedSession: nil, now: clock.now(), in: work)
                    else { throw Self.unusable }
                }
            case (.signIn, .assertion(let answer)):
                let session = try await passkeys.signIn(answer, in: project)
                let sealed = try sealer.sealText(
                    String(decoding: try JSONEncoder().encode(session), as: UTF8.self), context: link.id)
                guard
                    try await store.finishAnswer(
                        tokenHash: hash, startedAt: startedAt, completed: true, passkeyId: nil, sealedSession: sealed,
                        now: clock.now())
                else { throw Self.unusable }
            case (.registration, .assertion), (.signIn, .registration):
                throw VerityError(.invalidRequest, "The answer is for another ceremony than the link's.")
            }
        } catch {
            try await store.finishAnswer(
                tokenHash: hash, startedAt: startedAt, completed: false, passkeyId: nil, sealedSession: nil,
                now: clock.now())
            throw error
        }
        logger.info("Passkey link completed", metadata: ["link": "\(link.id)", "project": "\(project.id)"])
    }

    /// The link `id` as the backend reads it: its status, and a sign-in's session answer the first time only.
    func result(id: String, in project: Project) async throws -> (link: PasskeyLink, session: AuthResponse?) {
        guard var link = try await store.link(id: id, projectId: project.id) else {
            throw VerityError(.notFound, "No passkey link with this id in this project.")
        }
        var session: AuthResponse?
        if let sealed = link.sealedSession,
            try await store.takeSessionAnswer(id: id, projectId: project.id, sealed: sealed)
        {
            let json = try sealer.openText(sealed, context: link.id)
            session = try JSONDecoder().decode(AuthResponse.self, from: Data(json.utf8))
        }
        link.sealedSession = nil
        link.status = link.status(at: clock.now())
        return (link, session)
    }

    private static let unusable = VerityError(
        .challengeExpired, "This passkey link has expired or was already used.")

    private func pending(_ token: String) async throws -> PasskeyLink {
        guard let link = try await link(token: token), link.status(at: clock.now()) == .pending else {
            throw Self.unusable
        }
        return link
    }

    private static func hash(_ token: String) -> String? {
        OperatorService.isWellFormed(token, prefix: "vpk_") ? SecretHash.hex(token) : nil
    }
}
