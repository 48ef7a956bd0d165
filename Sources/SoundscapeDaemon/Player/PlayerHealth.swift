import SoundscapeCore
import Synchronization

/// Builds the health report, timing the player actor itself: if it cannot
/// answer within `bound`, the daemon's own loop is stuck, and that is reported
/// instead of waiting for it. The call to the actor runs in a task of its own
/// (a task group would wait for it even after the deadline).
enum PlayerHealth {
    static func report(player: Player, bound: Duration = .seconds(1)) async -> HealthReport {
        guard let checks = await firstAnswer(within: bound, { await player.health() }) else {
            return HealthReport(checks: [.init(name: HealthReport.Name.loop, ok: false,
                                               detail: "the player did not answer within \(bound)")])
        }
        return HealthReport(checks: [.init(name: HealthReport.Name.loop, ok: true)] + checks)
    }

    /// `operation`'s result, or nil if it has not answered within `bound`.
    static func firstAnswer<T: Sendable>(within bound: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let once = Once<T?>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            Task { once.resume(with: await operation()) }
            Task {
                try? await Task.sleep(for: bound)
                once.resume(with: nil)
            }
        }
    }

    /// Resumes a continuation exactly once, whoever comes first.
    private final class Once<T: Sendable>: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, value: T?, done: Bool)>((nil, nil, false))

        func set(_ continuation: CheckedContinuation<T, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        func resume(with value: T) {
            let continuation = state.withLock { state -> CheckedContinuation<T, Never>? in
                guard !state.done else { return nil }
                state.done = true
                return state.continuation
            }
            continuation?.resume(returning: value)
        }
    }
}
