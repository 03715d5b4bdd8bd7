extension Result where Failure == PasskeyRefusal, Success: Sendable {
    /// What `body` returns, or the ``PasskeyRefusal`` it throws; any other error is thrown on.
    ///
    /// A ceremony's unit of work answers with this, so it commits even when the answer is refused: the challenge the
    /// body spent stays spent and no answer is tried twice against it. The body writes what an answer proves only
    /// after the checks that can refuse it, so a refusal commits nothing else.
    init(ceremony body: () async throws -> Success) async throws {
        do {
            self = .success(try await body())
        } catch let refusal as PasskeyRefusal {
            self = .failure(refusal)
        }
    }
}
