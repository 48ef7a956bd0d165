/// A wait in a test that took too long. Its description says what was being waited for,
/// so a failure reads as a finding rather than a hang.
struct TimeoutError: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "timed out after \(seconds)s waiting for \(what)" }
}

/// An awaited event can no longer come: its stream ended (was cancelled) first.
struct StreamEnded: Error, CustomStringConvertible {
    let waitingFor: String
    var description: String { "stream ended before \"\(waitingFor)\"" }
}

/// Runs `body`, cancelling it and throwing ``TimeoutError`` if it takes longer than `seconds`.
/// `body` must respond to cancellation, as everything awaited in these tests does.
func withTimeout<T: Sendable>(
    _ what: String,
    seconds: Double = 3,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeoutError(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
