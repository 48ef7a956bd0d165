/// The progress watchdog's escalation. When audio that should flow has
/// stopped (no graph cycle for the output's grace period), each step gets
/// `interval` to bring it back before the next, stronger one; the last step
/// repeats, and the first time it fails that is reported once.
///
/// A part of `PlayerMachine`; pure, like the machine.
struct ReviveLadder: Sendable {
    enum State: Sendable, Equatable {
        case idle
        /// Audio stopped and the server does not answer (frozen, overloaded): no
        /// step is taken, since nothing of ours is broken and replacing it would
        /// only delay the sound once the server resumes.
        case waitingForServer
        /// `step` was taken; the next is due at `nextStepAt`. `failureReported` once
        /// even a fresh connection did not help and `resumeFailed` went out.
        case reviving(step: PlayerMachine.ReviveStep, nextStepAt: ContinuousClock.Instant, failureReported: Bool)
    }

    let interval: Duration
    private(set) var state: State = .idle

    init(interval: Duration) {
        self.interval = interval
    }

    /// Audio has stopped, whatever the cause: the player is recovering.
    var isWorking: Bool { state != .idle }

    /// Audio stopped, and the server does not answer: wait for it.
    mutating func serverUnresponsive() {
        if state == .idle { state = .waitingForServer }
    }

    /// Audio stalled while the server answers: take the first step, unless a
    /// stall is already being worked on.
    mutating func stalled(now: ContinuousClock.Instant) -> [PlayerMachine.Action] {
        guard state == .idle || state == .waitingForServer else { return [] }
        let next = now + interval
        state = .reviving(step: .reactivate, nextStepAt: next, failureReported: false)
        return [.revive(.reactivate), .scheduleTick(at: next)]
    }

    /// Audio flows again, or the stall no longer matters (stopped, or the server itself went away).
    mutating func reset() {
        state = .idle
    }

    /// The next step when one is due, with `resumeFailed` the first time the last step did not help.
    mutating func tick(now: ContinuousClock.Instant) -> (actions: [PlayerMachine.Action], news: PlayerMachine.Announcement?) {
        guard case .reviving(let step, let nextStepAt, var failureReported) = state, now >= nextStepAt else {
            return ([], nil)
        }
        let steps = PlayerMachine.ReviveStep.allCases
        let next = steps[min(steps.firstIndex(of: step)! + 1, steps.count - 1)]
        var news: PlayerMachine.Announcement?
        if step == .reconnect && !failureReported {
            // Even a fresh connection did not help: say so, and keep trying.
            failureReported = true
            news = PlayerMachine.Announcement(.resumeFailed, "audio is still stalled after reconnecting to PipeWire")
        }
        let due = now + interval
        state = .reviving(step: next, nextStepAt: due, failureReported: failureReported)
        return ([.revive(next), .scheduleTick(at: due)], news)
    }
}
