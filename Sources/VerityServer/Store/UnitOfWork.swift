import SQLKit

/// A transaction in progress that several stores' named state changes join, so that changes to several aggregates
/// (a possession step, its code, its outbox message and the rate limits it takes) commit together or not at all.
///
/// Domain code only opens one (``Database/unitOfWork(_:)`` through a store) and passes it along; what it holds is
/// Store's business.
struct UnitOfWork: Sendable {
    let sql: any SQLDatabase
}

extension Database {
    /// Runs `body` as one unit of work: every named state change given it commits with the others.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await transaction { sql in try await body(UnitOfWork(sql: sql)) }
    }

    /// Runs `body` in the caller's unit of work when there is one (a step of a larger change), otherwise as a unit of
    /// work of its own.
    func unitOfWork<T: Sendable>(in work: UnitOfWork?, _ body: @Sendable (UnitOfWork) async throws -> T)
        async throws -> T
    {
        if let work { return try await body(work) }
        return try await unitOfWork(body)
    }

    /// Runs `body` in the caller's unit of work when there is one (a step of a larger change), otherwise as
    /// ``execute(_:)``.
    func execute<T: Sendable>(in work: UnitOfWork?, _ body: @Sendable (any SQLDatabase) async throws -> T)
        async throws -> T
    {
        if let work { return try await body(work.sql) }
        return try await execute(body)
    }

    /// Runs `body` in the caller's unit of work when there is one, otherwise in a transaction of its own.
    func transaction<T: Sendable>(
        in work: UnitOfWork?, _ body: @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        if let work { return try await body(work.sql) }
        return try await transaction(body)
    }
}
