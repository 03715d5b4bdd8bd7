import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

@Suite("Verifications API")
struct VerificationAPITests {
    let phone = "+14155550100"

    @Test("SMS: start, wrong code, right code, then the code is spent", arguments: TestEngine.available)
    func smsHappyPath(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let started = try await client.startVerification("+1 (415) 555-0100", key: node.apiKey)
            #expect(started.status == .created)
            let verification = try started.decode(VerificationResponse.self)
            #expect(verification.id.hasPrefix("ver_"))
            #expect(verification.to == phone)
            #expect(verification.channel == .sms)
            #expect(verification.status == .pending)
            #expect(verification.sendAttempts == 1)
            #expect(verification.expiresAt == node.clock.now().addingTimeInterval(600))

            let code = try await node.sender.code(to: phone)
            #expect(code.count == 6)
            let message = try #require(node.sender.messages(to: phone).first)
            #expect(message.body == "Your Acme verification code is: \(code)")

            let wrong = try await client.check(to: phone, code: wrongCode(for: code), key: node.apiKey)
            #expect(wrong.status == .ok)
            #expect(
                try wrong.decode(CheckVerificationResponse.self)
                    == .init(id: verification.id, status: .pending, valid: false))

            let right = try await client.check(to: phone, code: code, key: node.apiKey)
            #expect(right.status == .ok)
            #expect(
                try right.decode(CheckVerificationResponse.self)
                    == .init(id: verification.id, status: .approved, valid: true))

            let again = try await client.check(id: verification.id, code: code, key: node.apiKey)
            #expect(again.status == .notFound)
            #expect(try again.problem().code == "verification_not_found")

            let fetched = try await client.send(.get, "/v1/verifications/\(verification.id)", key: node.apiKey)
            #expect(try fetched.decode(VerificationResponse.self).status == .approved)
            #expect(try fetched.decode(VerificationResponse.self).checkAttempts == 1)
        }
    }

    @Test("Email: check by id; the message has a subject", arguments: TestEngine.available)
    func emailById(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let started = try await client.startVerification(
                " Jane.Doe@Example.COM ", channel: "email", key: node.apiKey)
            #expect(started.status == .created)
            let verification = try started.decode(VerificationResponse.self)
            #expect(verification.to == "Jane.Doe@example.com")
            let code = try await node.sender.code(to: "Jane.Doe@example.com")
            let message = try #require(node.sender.messages(to: "Jane.Doe@example.com").first)
            #expect(message.channel == .email)
            #expect(message.subject == "Your Acme verification code")
            let right = try await client.check(id: verification.id, code: code, key: node.apiKey)
            #expect(try right.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test(
        "Starting again while pending re-sends the same code; the 6th send is refused", arguments: TestEngine.available)
    func resendSameCode(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var ids: Set<String> = []
            for attempt in 1...5 {
                let response = try await client.startVerification(phone, key: node.apiKey)
                #expect(response.status == .created)
                let verification = try response.decode(VerificationResponse.self)
                #expect(verification.sendAttempts == attempt)
                ids.insert(verification.id)
            }
            #expect(ids.count == 1)
            let messages = try await node.sender.waitForMessages(to: phone, count: 5)
            #expect(Set(messages.compactMap { RecordingSender.code(in: $0.body) }).count == 1)

            let sixth = try await client.startVerification(phone, key: node.apiKey)
            #expect(sixth.status == .tooManyRequests)
            #expect(try sixth.problem().code == "max_send_attempts_reached")
        }
    }

    @Test("Five wrong codes kill the verification; then even the right code gets 429", arguments: TestEngine.available)
    func attemptLimit(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            let code = try await node.sender.code(to: phone)
            for attempt in 1...5 {
                let response = try await client.check(to: phone, code: wrongCode(for: code), key: node.apiKey)
                #expect(response.status == .ok)
                let result = try response.decode(CheckVerificationResponse.self)
                #expect(result.valid == false)
                #expect(result.status == (attempt == 5 ? .maxAttemptsReached : .pending))
            }
            // By destination there is no pending verification any more; by id the limit is reported.
            let byTo = try await client.check(to: phone, code: code, key: node.apiKey)
            #expect(byTo.status == .notFound)
            let fetched = try await node.verity.verifications.pending(
                to: try Destination(loginId: phone), purpose: .api, in: node.project)
            #expect(fetched == nil)
        }
    }

    @Test("After the limit, checking by id answers 429 max_check_attempts_reached", arguments: TestEngine.available)
    func attemptLimitById(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            let code = try await node.sender.code(to: phone)
            for _ in 1...5 {
                _ = try await client.check(id: id, code: wrongCode(for: code), key: node.apiKey)
            }
            let right = try await client.check(id: id, code: code, key: node.apiKey)
            #expect(right.status == .tooManyRequests)
            #expect(try right.problem().code == "max_check_attempts_reached")
            let fetched = try await client.send(.get, "/v1/verifications/\(id)", key: node.apiKey)
            #expect(try fetched.decode(VerificationResponse.self).status == .maxAttemptsReached)
        }
    }

    @Test("An expired code is not found; a new start makes a new verification", arguments: TestEngine.available)
    func expiry(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let first = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self)
            let code = try await node.sender.code(to: phone)
            node.clock.advance(by: 601)
            let late = try await client.check(to: phone, code: code, key: node.apiKey)
            #expect(late.status == .notFound)
            #expect(try late.problem().code == "verification_not_found")
            let lateById = try await client.check(id: first.id, code: code, key: node.apiKey)
            #expect(lateById.status == .notFound)
            let fetched = try await client.send(.get, "/v1/verifications/\(first.id)", key: node.apiKey)
            #expect(try fetched.decode(VerificationResponse.self).status == .expired)

            let second = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self)
            #expect(second.id != first.id)
            #expect(second.sendAttempts == 1)
            let newCode = try await node.sender.code(to: phone, count: 2)
            let ok = try await client.check(to: phone, code: newCode, key: node.apiKey)
            #expect(try ok.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test("Cancel: a canceled verification cannot be checked or canceled again", arguments: TestEngine.available)
    func cancel(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            let code = try await node.sender.code(to: phone)
            let canceled = try await client.send(.post, "/v1/verifications/\(id)/cancel", key: node.apiKey)
            #expect(canceled.status == .ok)
            #expect(try canceled.decode(VerificationResponse.self).status == .canceled)
            #expect(try await client.check(id: id, code: code, key: node.apiKey).status == .notFound)
            let twice = try await client.send(.post, "/v1/verifications/\(id)/cancel", key: node.apiKey)
            #expect(twice.status == .conflict)
            let unknown = try await client.send(.post, "/v1/verifications/ver_unknown/cancel", key: node.apiKey)
            #expect(try unknown.problem().code == "verification_not_found")
        }
    }

    @Test("Project settings: code length and lifetime", arguments: TestEngine.available)
    func projectSettings(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(codeLength: 8, codeLifetime: 120))
        try await node.run { client in
            let verification = try await client.startVerification(phone, key: node.apiKey)
                .decode(VerificationResponse.self)
            #expect(verification.expiresAt == node.clock.now().addingTimeInterval(120))
            let code = try await node.sender.code(to: phone)
            #expect(code.count == 8)
        }
    }

    @Test("The country allowlist blocks other regions with 403", arguments: TestEngine.available)
    func countryAllowlist(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(allowedCountries: ["US", "CA"]))
        try await node.run { client in
            #expect(try await client.startVerification("+14165550100", key: node.apiKey).status == .created)
            let blocked = try await client.startVerification("+447700900123", key: node.apiKey)
            #expect(blocked.status == .forbidden)
            #expect(try blocked.problem().code == "country_not_allowed")
            // Email is not subject to the SMS allowlist.
            #expect(
                try await client.startVerification("a@example.org", channel: "email", key: node.apiKey).status
                    == .created)
            try await Task.sleep(for: .milliseconds(50))
            #expect(node.sender.messages(to: "+447700900123").isEmpty)
        }
    }

    @Test(
        "Messages are written in the requested language, falling back to English",
        arguments: [
            ("es-MX", "Tu código de verificación de Acme es: "), ("fr", "Votre code de vérification Acme est : "),
            ("de", "Ihr Acme-Bestätigungscode lautet: "), ("pt_BR", "Seu código de verificação do Acme é: "),
            ("ja", "Acmeの認証コードは "), ("sv", "Your Acme verification code is: "),
        ])
    func locales(locale: String, prefix: String) async throws {
        let node = try await TestNode.make(.sqlite)
        try await node.run { client in
            let response = try await client.startVerification(phone, key: node.apiKey, locale: locale)
            #expect(response.status == .created)
            let message = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(message.body.hasPrefix(prefix))
        }
    }

    @Test(
        "Tenancy: another project's key sees nothing of this project's verifications", arguments: TestEngine.available)
    func tenancy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let other = try await node.otherProject()
        try await node.run { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            let code = try await node.sender.code(to: phone)
            #expect(try await client.send(.get, "/v1/verifications/\(id)", key: other.apiKey).status == .notFound)
            #expect(try await client.check(id: id, code: code, key: other.apiKey).status == .notFound)
            #expect(try await client.check(to: phone, code: code, key: other.apiKey).status == .notFound)
            #expect(
                try await client.send(.post, "/v1/verifications/\(id)/cancel", key: other.apiKey).status == .notFound)
            // And it is untouched for its owner.
            #expect(
                try await client.check(id: id, code: code, key: node.apiKey).decode(CheckVerificationResponse.self)
                    .valid)
        }
    }

    @Test("A key revoked while in use stops working at once, though keys are cached", arguments: TestEngine.available)
    func revokedWhileCached(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let second = try await node.verity.admin.createKey(projectId: node.project.id, name: "ci")
        try await node.run { client in
            #expect(try await client.startVerification(phone, key: second.secret).status == .created)
            try await node.verity.admin.revokeKey(id: second.key.id, projectId: node.project.id)
            #expect(try await client.startVerification(phone, key: second.secret).status == .unauthorized)
            #expect(try await client.startVerification(phone, key: node.apiKey).status == .created)
        }
    }

    @Test("Unknown, malformed and revoked keys get 401", arguments: TestEngine.available)
    func authentication(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let second = try await node.verity.admin.createKey(projectId: node.project.id, name: "ci")
        try await node.verity.admin.revokeKey(id: second.key.id, projectId: node.project.id)
        try await node.run { client in
            for key in [nil, "vk_unknown", "not-a-key", second.secret] {
                let response = try await client.startVerification(phone, key: key ?? "")
                #expect(response.status == .unauthorized)
                #expect(try response.problem().code == "unauthorized")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            #expect(try await client.startVerification(phone, key: node.apiKey).status == .created)
        }
    }

    @Test("Per-project rate limit answers 429 with Retry-After", arguments: TestEngine.available)
    func projectRateLimit(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) {
            $0.rateLimits.perProject = RateLimitPolicy(capacity: 3, period: 60)
        }
        try await node.run { client in
            for suffix in 0..<3 {
                #expect(try await client.startVerification("+1415555010\(suffix)", key: node.apiKey).status == .created)
            }
            let limited = try await client.startVerification("+14155550109", key: node.apiKey)
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.problem().code == "rate_limited")
            #expect(limited.headers[.retryAfter] == "20")
            node.clock.advance(by: 20)
            #expect(try await client.startVerification("+14155550109", key: node.apiKey).status == .created)
        }
    }

    @Test("Per-destination rate limit holds even across verifications", arguments: TestEngine.available)
    func destinationRateLimit(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) {
            $0.rateLimits.perDestination = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await node.run { client in
            #expect(try await client.startVerification(phone, key: node.apiKey).status == .created)
            #expect(try await client.startVerification(phone, key: node.apiKey).status == .created)
            let limited = try await client.startVerification(phone, key: node.apiKey)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "1800")
            // Another destination is not affected.
            #expect(try await client.startVerification("+14155550101", key: node.apiKey).status == .created)
        }
    }
}
