import Foundation
import HTTPTypes
import Hummingbird
import Logging
import VerityCore

/// The Firebase face's admin side, for firebase-admin pointed at Verity (`FIREBASE_AUTH_EMULATOR_HOST`): users by
/// uid and by phone number, the user list, custom claims, disabling, revoking refresh tokens and deleting, under
/// `/identitytoolkit.googleapis.com/v1/projects/<Firebase project id>/accounts:…`.
///
/// firebase-admin in emulator mode always sends `Authorization: Bearer owner`. Verity accepts that, and lists pending
/// codes at `/emulator/v1/…/verificationCodes`, only for a project whose ``ProjectSettings/firebaseEmulatorAdmin`` is
/// on, while the server's `VERITY_FIREBASE_EMULATOR_ADMIN` is on too, and only to a loopback client that came through
/// no proxy; anything else wants the project's API key (`Bearer vk_…`).
struct FirebaseAdminFace {
    let projects: FirebaseProjects
    let admin: AdminService
    let users: UserService
    let accounts: UserAccounts
    let sessions: SessionService
    let verifications: VerificationService
    let testNumbers: TestNumberService
    let acceptsEmulatorOwner: Bool
    let logger: Logger

    func addRoutes(to router: Router<VerityRequestContext>) {
        let group = router.group("identitytoolkit.googleapis.com/v1/projects/:firebaseProjectId")
            .add(middleware: FaceErrorMiddleware.firebase(logger: logger))
        group.post("accounts:lookup", use: lookup)
        group.get("accounts:batchGet", use: list)
        group.post("accounts:update", use: update)
        group.post("accounts:delete", use: delete)
        if acceptsEmulatorOwner {  // and, per request, the project's own opt-in and a loopback client
            router.group("emulator/v1/projects/:firebaseProjectId").add(
                middleware: FaceErrorMiddleware.firebase(logger: logger)
            )
            .get("verificationCodes", use: verificationCodes)
        }
    }

    /// The emulator's list of the codes sent, which tests read instead of a phone: development only, for a project
    /// that opted in and a loopback client, since it shows live codes. Only codes the Firebase face started (never a
    /// sign-in through the native API or the Descope face), and only the project's test numbers' codes unless the
    /// project's setting is `all_numbers`.
    @Sendable func verificationCodes(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        guard
            let (_, project) = try await projects.project(
                firebaseProjectId: try context.parameters.require("firebaseProjectId")),
            servesEmulator(project, request, context)
        else { throw FirebaseError(status: 404, message: "NOT_FOUND") }
        var codes = try await verifications.pendingSignInCodes(startedBy: .firebase, in: project).filter {
            $0.destination.hasPrefix("+")
        }
        if project.settings.firebaseEmulatorAdmin != .allNumbers {
            let fixed = Set(try await testNumbers.list(in: project).map(\.phoneNumber))
            codes = codes.filter { fixed.contains($0.destination) }
        }
        return ExactKeysJSON([
            "verificationCodes": .array(
                codes.map {
                    .object([
                        "phoneNumber": .string($0.destination), "code": .string($0.code),
                        "sessionInfo": .string($0.verificationId),
                    ])
                })
        ])
    }

    @Sendable func lookup(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (_, project) = try await project(request, context)
        let body = try await FirebaseFace.decode(AdminLookupRequest.self, request, context)
        var found: [User] = []
        for id in body.localId ?? [] {
            if let user = try await users.findUser(id: id, in: project) { found.append(user) }
        }
        for phone in body.phoneNumber ?? [] {
            found += try await users.list(loginId: phone, in: project).items
        }
        var answer: [String: JSONValue] = ["kind": .string("identitytoolkit#GetAccountInfoResponse")]
        if !found.isEmpty { answer["users"] = .array(found.map(FirebaseFace.account)) }
        return ExactKeysJSON(answer)
    }

    @Sendable func list(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (_, project) = try await project(request, context)
        let limit = try request.queryInteger("maxResults").map { min($0, UserService.maxPageSize) }
        let page = try await users.list(
            limit: limit, cursor: request.uri.queryParameters["nextPageToken"].map(String.init), in: project)
        var answer: [String: JSONValue] = [
            "kind": .string("identitytoolkit#DownloadAccountResponse"),
            "users": .array(page.items.map(FirebaseFace.account)),
        ]
        if let next = page.nextCursor { answer["nextPageToken"] = .string(next) }
        return ExactKeysJSON(answer)
    }

    /// Custom claims (`customAttributes`, a JSON string), the display name, disabling (`disableUser`) and revoking
    /// refresh tokens (`validSince`). A login id, email or password cannot be changed through the face.
    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (_, project) = try await project(request, context)
        let body = try await FirebaseFace.decode(AdminUpdateRequest.self, request, context)
        guard let id = body.localId, !id.isEmpty else { throw FirebaseError.badRequest("MISSING_LOCAL_ID") }
        guard body.email == nil, body.password == nil, body.phoneNumber == nil, body.deleteProvider == nil else {
            throw FirebaseError.operationNotAllowed
        }
        var claims: [String: JSONValue]?
        if let text = body.customAttributes {
            guard let decoded = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else {
                throw FirebaseError.badRequest("INVALID_CLAIMS")
            }
            claims = decoded
        }
        guard try await users.findUser(id: id, in: project) != nil else { throw FirebaseError.userNotFound }
        do {
            _ = try await accounts.save(
                UserAccounts.Change(
                    .update(id: id, UpdateUserRequest(displayName: body.displayName, customClaims: claims)),
                    disabled: body.disableUser, endSessions: body.validSince != nil),
                in: project)
        } catch let error as VerityError where error.code == .invalidClaims {
            throw FirebaseError.badRequest("INVALID_CLAIMS : \(error.detail ?? "")")
        }
        return ExactKeysJSON(["kind": .string("identitytoolkit#SetAccountInfoResponse"), "localId": .string(id)])
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (_, project) = try await project(request, context)
        let body = try await FirebaseFace.decode(AdminDeleteRequest.self, request, context)
        guard let id = body.localId, !id.isEmpty else { throw FirebaseError.badRequest("MISSING_LOCAL_ID") }
        guard try await users.findUser(id: id, in: project) != nil else { throw FirebaseError.userNotFound }
        try await users.delete(id: id, in: project)
        return ExactKeysJSON(["kind": .string("identitytoolkit#DeleteAccountResponse")])
    }

    /// Whether the emulator's admin side is served for `project` to this request: the server and the project opted in,
    /// and the client is this machine, directly. The address is the one ClientAddressMiddleware settled on, so a
    /// forwarding header from an untrusted peer cannot claim loopback; and a request that carries a forwarding header
    /// at all came through a proxy (perhaps one on this machine that the operator did not list as trusted), so it is
    /// not a local tool's.
    private func servesEmulator(_ project: Project, _ request: Request, _ context: VerityRequestContext) -> Bool {
        guard acceptsEmulatorOwner, project.settings.firebaseEmulatorAdmin != .off,
            let address = context.clientAddress.flatMap(IPAddress.init), address.isLoopback
        else { return false }
        let forwarding = ["X-Forwarded-For", "Forwarded", "X-Real-IP"].compactMap { HTTPField.Name($0) }
        return !forwarding.contains { request.headers[$0] != nil }
    }

    /// The project the path names, once the caller proved it may administer it.
    private func project(_ request: Request, _ context: VerityRequestContext) async throws -> (FirebaseProject, Project)
    {
        let firebaseProjectId = try context.parameters.require("firebaseProjectId")
        guard let found = try await projects.project(firebaseProjectId: firebaseProjectId),
            let token = request.bearerToken
        else { throw FirebaseError.unauthenticated }
        if token == "owner", servesEmulator(found.1, request, context) { return found }
        guard let keyProject = try await admin.project(forAPIKey: token), keyProject.id == found.1.id else {
            throw FirebaseError.unauthenticated
        }
        return found
    }
}

private struct AdminLookupRequest: Decodable {
    var localId: [String]?
    var phoneNumber: [String]?
}

private struct AdminUpdateRequest: Decodable {
    var localId: String?
    var displayName: String?
    var customAttributes: String?
    var disableUser: Bool?
    /// Seconds since 1970, as a number or a string: tokens issued before it stop working (all sessions end).
    var validSince: JSONValue?
    var email: String?
    var password: String?
    var phoneNumber: String?
    var deleteProvider: [String]?
}

private struct AdminDeleteRequest: Decodable {
    var localId: String?
}
