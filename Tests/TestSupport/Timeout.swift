/// A wait in a test that took too long. Its description says what was being
/// waited for, so a failure reads as a finding rather than a hang.
public struct TimeoutError: Error, CustomStringConvertible {
    public let what: String
    public let seconds: Double
    public var description: String { "timed out after \(seconds)s waiting for \(what)" }
}

/// Runs `body`, cancelling it and throwing ``TimeoutError`` if it takes longer
/// than `seconds`. The sleep here is only the watchdog; `body` finishes as soon
/// as its work does, and must respond to cancellation.
public func withTimeout<T: Sendable>(
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
