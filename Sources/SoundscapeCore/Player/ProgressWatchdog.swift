/// The audio output's progress watchdog: what to make of an active stream
/// that runs no graph cycle. It tells a stall of ours from a server that does
/// not answer at all; `ReviveLadder` then decides how to bring a stall back.
///
/// The stall deadline itself is a timer that every refill pushes back, on the
/// output's loop thread and, without waking it, on the real-time thread; so a
/// healthy stream never wakes for it, and this machine hears only of a deadline
/// that passed. Before anything is torn down it asks whether the server answers
/// (a `sync` round trip): a frozen server (SIGSTOP, a debugger, an overloaded
/// machine) resumes our stream as it was, and replacing the stream meanwhile
/// would only delay the sound when it does.
///
/// Pure: no I/O and no clock (`now` is an input); the output's `ProgressWatch`
/// carries out the actions. Timers may fire late or spuriously (PipeWire runs a
/// timer's callback even when it was disarmed after it expired), so an input
/// that comes at the wrong moment changes nothing.
public struct ProgressWatchdog: Sendable {
    public enum State: Sendable, Equatable {
        /// The stream is not active: nothing to watch.
        case idle
        /// Cycles run (the deadline is pushed back as they do).
        case flowing
        /// No cycle for the grace: a sync went out (`sequence` once sent) and
        /// its echo is due by `answerDue`. `unresponsiveReported` once
        /// `.serverUnresponsive` went out.
        case probing(sequence: Int32?, answerDue: ContinuousClock.Instant, unresponsiveReported: Bool)
        /// The server answers again after it did not: its cycles get until the next look.
        case serverBack
        /// The server answers and still no cycle runs: `.stalled` went out.
        case stuck
    }

    /// What the watchdog tells the player.
    public enum Report: Sendable, Equatable {
        /// No cycle, and the server does not answer either: nothing of ours to replace.
        case serverUnresponsive
        /// No cycle while the server answers: our stream is stuck.
        case stalled
        /// Cycles run again after a report that they did not.
        case flowing
    }

    public enum Action: Sendable, Equatable {
        /// (Re)starts the stall deadline, to pass at `at`, counting from how far
        /// rendering has got now.
        case armDeadline(at: ContinuousClock.Instant)
        case disarmDeadline
        /// Sends the server a sync, then `probeSent(sequence:)`; its echo is due by `answerDue`.
        case probeServer(answerDue: ContinuousClock.Instant)
        /// No echo is awaited any more: the answer deadline's timer may go.
        case cancelProbe
        /// Asks the real-time thread to report the next cycle (`cycleRan`).
        case watchForCycle
        case report(Report)
    }

    /// How long an active stream may run no cycle before it counts as stalled.
    public let grace: Duration
    /// How soon to look again after a late cycle or a server that answers
    /// again, and how long the server has to answer a sync.
    public let recheck: Duration
    public private(set) var state: State = .idle

    public init(grace: Duration, recheck: Duration = .milliseconds(500)) {
        self.grace = grace
        self.recheck = recheck
    }

    /// Whether an event said audio had stopped, so its return is news.
    public var hasReported: Bool {
        switch state {
        case .idle, .flowing, .probing(_, _, false): false
        case .probing(_, _, true), .serverBack, .stuck: true
        }
    }

    /// The stream is active and meant to run (a play, a reactivated or
    /// replaced stream): the deadline starts over from now.
    public mutating func start(now: ContinuousClock.Instant) -> [Action] {
        if state == .idle { state = .flowing }
        return [.armDeadline(at: now + grace)]
    }

    /// The stream was made inactive: nothing to watch, and a stall reported is over.
    public mutating func stop() -> [Action] {
        let reported = hasReported
        state = .idle
        return [.disarmDeadline, .cancelProbe] + (reported ? [.report(.flowing)] : [])
    }

    /// The connection went away: the disconnect is the news now, and a stall
    /// on the old connection is over without a word.
    public mutating func connectionDropped() -> [Action] {
        state = .idle
        return [.disarmDeadline, .cancelProbe]
    }

    /// A ring was refilled on the loop thread: while cycles run, the deadline moves on.
    public mutating func refilled(now: ContinuousClock.Instant) -> [Action] {
        state == .flowing ? [.armDeadline(at: now + grace)] : []
    }

    /// The stall deadline passed. `cyclesRan`: rendering got further after the
    /// deadline was last pushed (the grace counts from the last cycle, not the
    /// last refill), so look again shortly.
    public mutating func deadlinePassed(cyclesRan: Bool, now: ContinuousClock.Instant) -> [Action] {
        if state == .idle { return [] }
        if cyclesRan { return [.armDeadline(at: now + recheck)] }
        switch state {
        case .flowing:
            let due = now + recheck
            state = .probing(sequence: nil, answerDue: due, unresponsiveReported: false)
            return [.probeServer(answerDue: due), .watchForCycle]
        case .serverBack:
            state = .stuck
            return [.report(.stalled), .watchForCycle]
        case .idle, .probing, .stuck:
            return [.watchForCycle]
        }
    }

    /// The sync asked for by `.probeServer` went out with this sequence number.
    public mutating func probeSent(sequence: Int32) {
        guard case .probing(nil, let due, let reported) = state else { return }
        state = .probing(sequence: sequence, answerDue: due, unresponsiveReported: reported)
    }

    /// The answer deadline's timer fired: without an echo by then, the server is not answering.
    public mutating func answerDeadlinePassed(now: ContinuousClock.Instant) -> [Action] {
        guard case .probing(let sequence, let due, false) = state, now >= due else { return [] }
        state = .probing(sequence: sequence, answerDue: due, unresponsiveReported: true)
        return [.report(.serverUnresponsive)]
    }

    /// The server echoed a sync (core `done`). If ours, it answers: a stream
    /// still without cycles is stuck on our side. A server that had stopped
    /// answering first gets a moment to run its cycles again.
    public mutating func serverAnswered(sequence: Int32, now: ContinuousClock.Instant) -> [Action] {
        guard case .probing(let expected?, _, let reported) = state, sequence == expected else { return [] }
        if reported {
            state = .serverBack
            return [.cancelProbe, .armDeadline(at: now + recheck)]
        }
        state = .stuck
        return [.cancelProbe, .report(.stalled)]
    }

    /// The real-time thread saw a cycle after `.watchForCycle`: audio flows again.
    public mutating func cycleRan(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .idle, .flowing:
            return []
        case .probing, .serverBack, .stuck:
            let reported = hasReported
            state = .flowing
            return [.cancelProbe] + (reported ? [.report(.flowing)] : []) + [.armDeadline(at: now + grace)]
        }
    }
}
