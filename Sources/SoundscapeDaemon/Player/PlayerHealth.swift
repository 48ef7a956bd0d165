import SoundscapeCore
import Synchronization

extension Player {
    /// Every check but the loop's own (the caller times this call for that).
    func health() async -> [HealthReport.Check] {
        let status = await status()
        var checks: [HealthReport.Check] = []
        let connected = machine.output.isConnected
        checks.append(
            .init(
                name: HealthReport.Name.pipewire, ok: connected,
                detail: connected ? nil : "not connected to a PipeWire server; retrying"))
        switch machine.desired.intent {
        case .playing:
            let flowing = status.state == .playing
            checks.append(
                .init(
                    name: HealthReport.Name.audio, ok: flowing,
                    detail: flowing
                        ? nil
                        : "wanted playing but \(status.state.rawValue)"
                            + (status.noSink ? ": no sink to play to" : "")))
        case .paused:
            checks.append(.init(name: HealthReport.Name.audio, ok: true, detail: "not wanted (paused)"))
        case .stopped:
            checks.append(.init(name: HealthReport.Name.audio, ok: true, detail: "not wanted (stopped)"))
        }
        if let signerStatus = status.signer {
            checks.append(.signer(signerStatus, wanted: signer?.wanted ?? false, downReason: signer?.downReason))
        }
        // The write itself runs on the worker thread; this actor is free meanwhile.
        let problem = await keeper.checkWritable()
        let aside = keeper.movedAside.map { "a damaged database was moved to \($0) at start" }
        checks.append(
            .init(
                name: HealthReport.Name.store, ok: problem == nil,
                detail: [problem, aside].compactMap { $0 }.joined(separator: "; ").nilIfEmpty))
        return checks
    }
}

/// Builds the health report, timing the player actor itself: if it cannot
/// answer within `bound`, the daemon's own loop is stuck, and that is reported
/// instead of waiting for it. The call to the actor runs in a task of its own
/// (a task group would wait for it even after the deadline).
enum PlayerHealth {
    static func report(player: Player, bound: Duration = .seconds(1)) async -> HealthReport {
        guard let checks = await firstAnswer(within: bound, { await player.health() }) else {
            return HealthReport(checks: [
                .init(
                    name: HealthReport.Name.loop, ok: false,
                    detail: "the player did not answer within \(bound)")
            ])
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

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
