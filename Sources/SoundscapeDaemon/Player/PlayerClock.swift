import NIOCore

/// The player's time: what time it is, and a call at a later instant.
///
/// Injected, like the clock of hummingbird's connection state machine: the
/// daemon passes `EventLoopClock`, and the player's tests pass a virtual clock
/// they move forward themselves, so a 3 s start deadline or a 1 s bound on a
/// write is tested without waiting for it.
public protocol PlayerClock: Sendable {
    var now: ContinuousClock.Instant { get }

    /// Calls `body` at `deadline` (at once when it has passed). A call
    /// cancelled before then never runs.
    func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> ScheduledCall
}

/// A call `PlayerClock.schedule` made; `cancel` drops it if it has not run.
public struct ScheduledCall: Sendable {
    private let cancelling: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) {
        cancelling = cancel
    }

    public func cancel() {
        cancelling()
    }
}

/// Real time, with calls as NIO scheduled tasks on one event loop (the daemon's).
///
/// Not `Task.sleep`: a cancelled sleep still woke the event loop at its
/// deadline (`EventLoopConcurrency`'s timers), and the playing daemon must not
/// wake a second after every command for a bound that was never needed. A
/// cancelled scheduled task is removed from the loop's timer heap.
public struct EventLoopClock: PlayerClock {
    private let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public var now: ContinuousClock.Instant { .now }

    public func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> ScheduledCall {
        // NIO's deadlines are on CLOCK_MONOTONIC, ContinuousClock's on CLOCK_BOOTTIME: schedule by the delay.
        let delay = max(deadline - .now, .zero)
        let scheduled = eventLoop.scheduleTask(in: TimeAmount(delay)) { body() }
        return ScheduledCall { scheduled.cancel() }
    }
}
