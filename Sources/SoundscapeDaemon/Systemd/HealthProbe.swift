import Synchronization

/// Asks the daemon's health check for an answer within a deadline.
///
/// A daemon whose loop is stuck is exactly what the watchdog exists to catch, so the
/// probe must never wait for a check that does not return: the check runs in a task of
/// its own and the probe stops listening at the deadline. While one check is still
/// outstanding no second one is started, so a deadlocked actor collects one waiter, not
/// one per interval.
final class HealthProbe: Sendable {
    enum Verdict: Sendable, Equatable {
        case healthy
        case unhealthy
        /// No answer before the deadline.
        case timedOut
        /// The check asked at an earlier deadline has still not answered.
        case stillWaiting
        /// The caller was cancelled while waiting.
        case cancelled
    }

    private let check: @Sendable () async -> Bool
    private let isChecking = Mutex(false)

    init(check: @escaping @Sendable () async -> Bool) {
        self.check = check
    }

    func verdict(within timeout: Duration) async -> Verdict {
        let starts = isChecking.withLock { checking in
            defer { checking = true }
            return !checking
        }
        guard starts else { return .stillWaiting }
        let answer = FirstAnswer()
        Task {
            let healthy = await check()
            isChecking.withLock { $0 = false }
            answer.give(healthy ? .healthy : .unhealthy)
        }
        let deadline = Task {
            try await Task.sleep(for: timeout)
            answer.give(.timedOut)
        }
        defer { deadline.cancel() }
        return await answer.value
    }
}

/// The first of several racing answers; later ones are dropped.
private final class FirstAnswer: Sendable {
    private enum State {
        case waiting(CheckedContinuation<HealthProbe.Verdict, Never>?)
        case answered(HealthProbe.Verdict)
        case delivered
    }

    private let state = Mutex(State.waiting(nil))

    func give(_ verdict: HealthProbe.Verdict) {
        let waiter: CheckedContinuation<HealthProbe.Verdict, Never>? = state.withLock { state in
            guard case .waiting(let continuation) = state else { return nil }
            state = continuation == nil ? .answered(verdict) : .delivered
            return continuation
        }
        waiter?.resume(returning: verdict)
    }

    var value: HealthProbe.Verdict {
        get async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let early: HealthProbe.Verdict? = state.withLock { state in
                        switch state {
                        case .waiting:
                            state = .waiting(continuation)
                            return nil
                        case .answered(let verdict):
                            state = .delivered
                            return verdict
                        case .delivered:
                            preconditionFailure("an answer is awaited once")
                        }
                    }
                    if let early { continuation.resume(returning: early) }
                }
            } onCancel: {
                give(.cancelled)
            }
        }
    }
}
