import Foundation
import Logging
import VerityCore

/// A project's test phone numbers: sign-in codes to them are never sent, their fixed code always works, and no rate
/// limit applies. For app review and automated tests only.
public struct TestNumberService: Sendable, UsesRuntime {
    /// The most test numbers a project may have.
    public static let maxNumbers = 10

    private let store: TestNumberStore
    let runtime: Runtime

    init(store: TestNumberStore, runtime: Runtime) {
        self.store = store
        self.runtime = runtime
    }

    /// The fixed code of `phone` (E.164) when it is one of the project's test numbers.
    func fixedCode(phone: String, in project: Project) async throws -> String? {
        try await store.code(phone: phone, projectId: project.id)
    }

    public func add(_ request: CreateTestPhoneNumberRequest, in project: Project) async throws -> TestPhoneNumber {
        let number = try Destination.phoneNumber(request.phoneNumber)
        try VerificationService.requireCodeFormat(request.code)
        let testNumber = TestPhoneNumber(phoneNumber: number.e164, code: request.code, createdAt: clock.now())
        guard try await store.upsert(testNumber, projectId: project.id, limit: Self.maxNumbers) else {
            throw VerityError(
                .testNumberLimitReached, "A project has at most \(Self.maxNumbers) test numbers; remove one first.")
        }
        logger.notice(
            "Test number added: codes to it are never sent and its fixed code always works",
            metadata: ["to": "\(number.masked)", "project": "\(project.id)"])
        return testNumber
    }

    public func list(in project: Project) async throws -> [TestPhoneNumber] {
        try await store.numbers(projectId: project.id)
    }

    public func remove(_ phoneNumber: String, in project: Project) async throws {
        let e164 = (try? PhoneNumber(parsing: phoneNumber))?.e164 ?? phoneNumber
        guard try await store.delete(phone: e164, projectId: project.id) else {
            throw VerityError(.notFound, "\(phoneNumber) is not a test number of this project.")
        }
    }
}
