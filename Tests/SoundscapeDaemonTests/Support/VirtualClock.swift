import SoundscapeCore
import Synchronization
import TestSupport
@testable import SoundscapeDaemon

/// Time that moves only when the test says so: the player's deadlines (a
/// start's 3 s, a write's bound, the fade-out's bound) are reached by
/// `advance(by:)`, never by waiting. It starts at the real now, so instants
/// the player compares with it stay meaningful.
final class VirtualClock: PlayerClock, Sendable {
    private struct Call {
        var id: Int
        var deadline: ContinuousClock.Instant
        var body: @Sendable () -> Void
    }

    private struct State {
        var now = ContinuousClock.now
        var nextID = 0
        var calls: [Call] = []
        /// Tests waiting for a call to be scheduled.
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// Calls waiting for their instant.
    var pendingCount: Int { state.withLock { $0.calls.count } }

    func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        let (id, watchers) = state.withLock { state in
            defer {
                state.nextID += 1
                state.watchers = []
            }
            state.calls.append(Call(id: state.nextID, deadline: deadline, body: body))
            return (state.nextID, state.watchers)
        }
        for watcher in watchers { watcher.resume() }
        // One that is already due runs at once, as the real clock's would.
        advance(by: .zero)
        return ScheduledCall { [self] in state.withLock { $0.calls.removeAll { $0.id == id } } }
    }

    /// Returns once a call is pending (at once if one is); fails after 5 s.
    func waitForScheduledCall(_ what: String) async throws {
        try await withTimeout("\(what) to be scheduled on the clock", seconds: 5) { [self] in
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let pending = state.withLock { state -> Bool in
                        if state.calls.isEmpty { state.watchers.append(continuation) }
                        return !state.calls.isEmpty
                    }
                    if pending { continuation.resume() }
                }
            } onCancel: {
                for watcher in state.withLock({ state in
                    defer { state.watchers = [] }; return state.watchers
                }) {
                    watcher.resume()
                }
            }
        }
    }

    /// Moves time forward by `duration`, running every call that comes due on
    /// the way, earliest first, each at its own instant.
    func advance(by duration: Duration) {
        let target = now + duration
        while let due = state.withLock({ state -> Call? in
            guard let index = state.calls.indices.min(by: { state.calls[$0].deadline < state.calls[$1].deadline }),
                state.calls[index].deadline <= target
            else { return nil }
            let call = state.calls.remove(at: index)
            state.now = max(state.now, call.deadline)
            return call
        }) {
            due.body()
        }
        state.withLock { $0.now = max($0.now, target) }
    }
}
