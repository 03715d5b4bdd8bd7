import Foundation
import Logging
import VerityCore

/// Passkeys as a way into an account: a sign-up that creates the user with their first passkey and opens a session,
/// and the choice a "sign up or in" client asks the server to make. The WebAuthn checks and the challenges are
/// ``PasskeyService``'s; this joins them with users and sessions in one unit of work, so a refused sign-up leaves no
/// user behind and an accepted one always has its passkey and its session.
struct PasskeyAccounts: Sendable {
    let passkeys: PasskeyService
    let users: UserService
    let sessions: SessionService

    /// What a "sign up or in" start asks the client to do.
    enum SignUpOrIn: Sendable {
        /// Make a passkey: nobody holds the login id, so the answer signs them up.
        case signUp(PasskeyCreationOptions)
        /// Use one of the user's passkeys.
        case signIn(PasskeyRequestOptions)
    }

    /// The options of a sign-up of a new user holding `loginId` (shown to the authenticator as `displayName`, if
    /// given). A login id someone holds is refused (`login_id_taken`) before the authenticator makes a credential
    /// that could never be registered.
    ///
    /// The `sessionClaims` a client asks for here and in the other starts are checked for `dialect` (`invalid_claims`,
    /// as a code sign-in's are), kept with the challenge, and carried by the session the answer opens or steps up.
    func signUpOptions(
        loginId: String, displayName: String?, sessionClaims: [String: JSONValue]? = nil,
        dialect: SessionTokenDialect? = nil, in project: Project
    ) async throws -> PasskeyCreationOptions {
        let logins = try UserLogins([loginId])
        let claims = try SessionService.requestedClaims(sessionClaims, dialect: dialect)
        guard try await users.findUser(loginId: loginId, in: project) == nil else { throw Self.taken }
        return try await passkeys.signUpOptions(
            logins, displayName: try UserService.validDisplayName(displayName), sessionClaims: claims, in: project)
    }

    /// Signs up or in by passkey: the options of a sign-in when the login id's user has a passkey, of a sign-up when
    /// nobody holds it. A user without a passkey is refused (`login_id_taken`): registering one for them here would
    /// hand their account to whoever asked, so they sign in another way and add one.
    func signUpOrInOptions(
        loginId: String, sessionClaims: [String: JSONValue]? = nil, dialect: SessionTokenDialect? = nil,
        in project: Project
    ) async throws -> SignUpOrIn {
        guard let user = try await users.findUser(loginId: loginId, in: project) else {
            return .signUp(
                try await signUpOptions(
                    loginId: loginId, displayName: nil, sessionClaims: sessionClaims, dialect: dialect, in: project))
        }
        guard !(try await passkeys.passkeys(userId: user.id, in: project)).isEmpty else {
            throw VerityError(
                .loginIdTaken, "The user has no passkey yet: they sign in another way and add one to their account.")
        }
        return .signIn(try await signInOptions(user, sessionClaims: sessionClaims, dialect: dialect, in: project))
    }

    /// The options of a sign-in of the user holding `loginId`, naming their passkeys. A login id nobody holds is
    /// refused as a user without passkeys is not (`user_not_found`), as Descope's sign-in does.
    func signInOptions(
        loginId: String, sessionClaims: [String: JSONValue]? = nil, dialect: SessionTokenDialect? = nil,
        in project: Project
    ) async throws -> PasskeyRequestOptions {
        guard let user = try await users.findUser(loginId: loginId, in: project) else {
            throw VerityError(.userNotFound, "No user has this login id.")
        }
        return try await signInOptions(user, sessionClaims: sessionClaims, dialect: dialect, in: project)
    }

    private func signInOptions(
        _ user: User, sessionClaims: [String: JSONValue]?, dialect: SessionTokenDialect?, in project: Project
    ) async throws -> PasskeyRequestOptions {
        try await passkeys.authenticationOptions(
            userId: user.id, sessionClaims: try SessionService.requestedClaims(sessionClaims, dialect: dialect),
            in: project)
    }

    /// The options of a step-up of the signed-in session `auth` by one of its user's passkeys; the `sessionClaims`
    /// join the session's once the answer steps it up.
    func stepUpOptions(
        for auth: SessionAuth, sessionClaims: [String: JSONValue]? = nil, dialect: SessionTokenDialect? = nil,
        in project: Project
    ) async throws -> PasskeyRequestOptions {
        try await passkeys.stepUpOptions(
            for: auth, sessionClaims: try SessionService.requestedClaims(sessionClaims, dialect: dialect),
            in: project)
    }

    /// Checks a sign-up's registration answer and, in one unit of work with it, creates the user the sign-up named,
    /// keeps the passkey and opens a session proven by it (its `amr` by the passkey's BE and UV flags, `acr: mfa` with
    /// UV). A login id taken since the start is refused and writes nothing.
    func signUp(_ answer: PasskeyRegistrationAnswer, dialect: SessionTokenDialect? = nil, in project: Project)
        async throws -> AuthResponse
    {
        let users = users
        let sessions = sessions
        let now = sessions.clock.now()
        let (_, opened) = try await passkeys.signUp(answer, in: project) { work, signUp, registered in
            let logins = try UserLogins(signUp.loginIds)
            guard let loginKey = logins.keys.first else { throw VerityError(.invalidLoginId) }
            let (user, firstSeen) = try await users.signingIn(
                loginKey: loginKey, newUser: User(id: signUp.userId, loginIds: logins.ids, createdAt: now),
                logins: logins, projectId: project.id, in: work)
            guard firstSeen else { throw Self.taken }
            var opened = try await sessions.open(
                userId: user.id, amr: registered.amr, acr: registered.acr, claims: signUp.sessionClaims ?? [:],
                in: project, in: work)
            opened.firstSeen = true
            return opened
        }
        return try await sessions.answer(opened, dialect: dialect, in: project)
    }

    private static let taken = VerityError(.loginIdTaken, "A user already has this login id.")
}
