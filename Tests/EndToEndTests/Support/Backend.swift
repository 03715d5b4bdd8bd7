import Foundation
import VerityCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The customer's backend: calls Verity over HTTP with the project's API key.
struct Backend: Sendable {
    let baseURL: URL
    let apiKey: String
    let session: URLSession

    /// An answer with another status than the call expects.
    struct UnexpectedResponse: Error, CustomStringConvertible {
        let status: Int
        let body: String

        var description: String { "HTTP \(status): \(body)" }
    }

    /// A token the app enrolls a push factor for `userId` with.
    func enrollmentToken(userId: String) async throws -> String {
        let body = try JSONEncoder().encode(CreateEnrollmentTokenRequest(userId: userId))
        return try await send("POST", "v1/enrollment-tokens", body: body, expecting: 201, as: EnrollmentToken.self)
            .token
    }

    func createChallenge(_ request: CreateChallengeRequest) async throws -> Challenge {
        try await send("POST", "v1/challenges", body: try JSONEncoder().encode(request), expecting: 201)
    }

    /// The challenge; with `wait`, once it is answered or expires, or after `wait` seconds.
    func challenge(id: String, wait: Int? = nil) async throws -> Challenge {
        try await send(
            "GET", "v1/challenges/\(id)", query: wait.map { [URLQueryItem(name: "wait", value: "\($0)")] } ?? [],
            expecting: 200)
    }

    func factor(id: String) async throws -> Factor {
        try await send("GET", "v1/factors/\(id)", expecting: 200)
    }

    func user(id: String) async throws -> User {
        try await send("GET", "v1/users/\(id)", expecting: 200)
    }

    /// `PATCH /v1/project`: the project's device-trust settings.
    func updateProject(_ request: UpdateProjectRequest) async throws -> ProjectSummary {
        try await send("PATCH", "v1/project", body: try JSONEncoder().encode(request), expecting: 200)
    }

    func addTestNumber(_ phoneNumber: String, code: String) async throws {
        let body = try JSONEncoder().encode(CreateTestPhoneNumberRequest(phoneNumber: phoneNumber, code: code))
        _ = try await send("POST", "v1/test-numbers", body: body, expecting: 201, as: TestPhoneNumber.self)
    }

    func createRole(_ name: String, permissions: [String]) async throws {
        let body = try JSONEncoder().encode(CreateRoleRequest(name: name, permissions: permissions))
        _ = try await send("POST", "v1/roles", body: body, expecting: 201, as: Role.self)
    }

    func assignRoles(_ roles: [String], to userId: String) async throws -> User {
        try await send(
            "POST", "v1/users/\(userId)/roles", body: try JSONEncoder().encode(AssignRolesRequest(roles: roles)),
            expecting: 200)
    }

    func updateUser(_ userId: String, _ request: UpdateUserRequest) async throws -> User {
        try await send("PATCH", "v1/users/\(userId)", body: try JSONEncoder().encode(request), expecting: 200)
    }

    func securityEvents(userId: String) async throws -> [SecurityEvent] {
        try await send(
            "GET", "v1/security-events", query: [URLQueryItem(name: "userId", value: userId)], expecting: 200,
            as: Page<SecurityEvent>.self
        ).items
    }

    func startPossession(_ request: StartPossessionRequest) async throws -> StartedPossession {
        try await send("POST", "v1/possession", body: try JSONEncoder().encode(request), expecting: 201)
    }

    func validatePossession(_ correlationId: String) async throws -> PossessionValidation {
        try await send("POST", "v1/possession/\(correlationId)/validate", expecting: 200)
    }

    private func send<Value: Decodable>(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil, expecting status: Int,
        as type: Value.Type = Value.self
    ) async throws -> Value {
        let url = baseURL.appendingPathComponent(path, isDirectory: false)
        var request = URLRequest(
            url: query.isEmpty ? url : url.appending(queryItems: query), cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: 30)
        request.httpMethod = method
        request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let (data, response) = try await session.data(for: request)
        let answered = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard answered == status else {
            throw UnexpectedResponse(status: answered, body: String(decoding: data, as: UTF8.self))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(Value.self, from: data)
    }
}
