/// Where the `Player` is in its life, and which callers wait for what.
///
/// The player's own state (what plays, what the user wants) is
/// `PlayerMachine`'s; this is the life of the actor around it: calls that
/// arrive before the saved state is loaded wait for it, a `play` waits until
/// its start has settled, and the exit waits for the fade-out. Each waiter is
/// held in the state it waits on, so no flag can say "running" while a list
/// still holds a caller of "starting".
///
/// Pure, like the machines: the actor reports what happened and resumes the
/// waiters each method hands back (every method returns the waiters to resume
/// now, which is the one it was given when that need not wait). Generic over
/// the waiter, so the daemon holds continuations here and the tests plain values.
public struct PlayerLifecycle<Waiter> {
    public enum State {
        /// The saved state is not loaded yet: every call waits for it.
        case starting(callers: [Waiter])
        /// Serving calls; `settling` are the plays waiting for their start to be
        /// confirmed by the graph, or to fail visibly.
        case running(settling: [Waiter])
        /// Fading out for the exit.
        case shuttingDown(FadeOut)
    }

    /// The last fade-out, which the exit waits for (bounded by the actor's timer).
    public enum FadeOut {
        case underway(waiters: [Waiter])
        case done
    }

    public private(set) var state: State = .starting(callers: [])

    public init() {}

    public var isRunning: Bool {
        if case .running = state { true } else { false }
    }

    public var isShuttingDown: Bool {
        if case .shuttingDown = state { true } else { false }
    }

    /// How many plays wait for their start to settle (for tests that must know a reply is held).
    public var settlingCount: Int {
        if case .running(let settling) = state { settling.count } else { 0 }
    }

    /// A call that needs the saved state: held while starting.
    public mutating func waitUntilRunning(_ waiter: Waiter) -> [Waiter] {
        guard case .starting(var callers) = state else { return [waiter] }
        callers.append(waiter)
        state = .starting(callers: callers)
        return []
    }

    /// The saved state is loaded: the callers that waited go on. Nothing
    /// changes if the exit began meanwhile (it already let them go).
    public mutating func restored() -> [Waiter] {
        guard case .starting(let callers) = state else { return [] }
        state = .running(settling: [])
        return callers
    }

    /// A play that must wait until its start settles (`settling`), unless the
    /// exit has begun, which answers every caller.
    public mutating func waitForSettle(_ waiter: Waiter, settling: Bool) -> [Waiter] {
        guard settling, case .running(var waiting) = state else { return [waiter] }
        waiting.append(waiter)
        state = .running(settling: waiting)
        return []
    }

    /// The last start is confirmed or has visibly failed.
    public mutating func settled() -> [Waiter] {
        guard case .running(let waiting) = state, !waiting.isEmpty else { return [] }
        state = .running(settling: [])
        return waiting
    }

    /// The exit begins: whoever waits for the start or for a start to settle
    /// goes on (the answers say what is true). Returns nil when it had already begun.
    public mutating func shutdownBegins() -> [Waiter]? {
        let released: [Waiter]
        switch state {
        case .starting(let callers): released = callers
        case .running(let settling): released = settling
        case .shuttingDown: return nil
        }
        state = .shuttingDown(.underway(waiters: []))
        return released
    }

    /// The exit waits for the fade-out, unless it is over.
    public mutating func waitForFadeOut(_ waiter: Waiter) -> [Waiter] {
        guard case .shuttingDown(.underway(var waiters)) = state else { return [waiter] }
        waiters.append(waiter)
        state = .shuttingDown(.underway(waiters: waiters))
        return []
    }

    /// The output reports the fade-out done, or the bound on it passed.
    public mutating func fadeOutEnded() -> [Waiter] {
        guard case .shuttingDown(.underway(let waiters)) = state else { return [] }
        state = .shuttingDown(.done)
        return waiters
    }
}

/// `play`, `pause` and `stop` take effect in the order they were called, one
/// at a time, even though a play first waits for its file to be opened: first
/// come, first served. Pure, like `PlayerLifecycle`: `leave` returns the
/// waiter to resume. (Taking a free turn does not suspend the caller, so
/// nothing else runs on the actor between the call and its first step.)
public struct CommandQueue<Waiter> {
    public enum State {
        case idle
        /// A command runs; `waiting` come after it, in order.
        case busy(waiting: [Waiter])
    }

    public private(set) var state: State = .idle

    public init() {}

    public var isBusy: Bool {
        if case .busy = state { true } else { false }
    }

    /// Takes the turn when no command runs: true to go on now; false to `wait`.
    public mutating func enter() -> Bool {
        guard case .idle = state else { return false }
        state = .busy(waiting: [])
        return true
    }

    /// Waits behind the command that runs (after `enter` said no).
    public mutating func wait(_ waiter: Waiter) {
        guard case .busy(var waiting) = state else {
            preconditionFailure("wait without a command running: call enter first")
        }
        waiting.append(waiter)
        state = .busy(waiting: waiting)
    }

    /// The running command is done: the next one, if any, goes on (it holds the turn).
    public mutating func leave() -> [Waiter] {
        guard case .busy(var waiting) = state else { return [] }
        guard !waiting.isEmpty else {
            state = .idle
            return []
        }
        let next = waiting.removeFirst()
        state = .busy(waiting: waiting)
        return [next]
    }
}
