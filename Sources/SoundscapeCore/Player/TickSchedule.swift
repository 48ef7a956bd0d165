/// The instants the machines asked to be woken at (`scheduleTick`), served by
/// one timer: it is armed for the earliest, and when it fires, what is due is
/// dropped and it is armed for the next.
///
/// A tick re-evaluates everything, so instants that coincide are one tick,
/// and none is lost: each stays until the timer has fired at or after it. A
/// timer that fires early (its clock and ours drift, as a timer on
/// `CLOCK_MONOTONIC` does against the `CLOCK_BOOTTIME` of `ContinuousClock`
/// across a suspend) drops nothing and is armed again.
public struct TickSchedule: Sendable, Equatable {
    /// Ascending, without repeats.
    public private(set) var pending: [ContinuousClock.Instant] = []

    public init() {}

    /// The instant the timer is armed for, if any.
    public var next: ContinuousClock.Instant? { pending.first }

    /// Adds `deadline`; returns the instant to arm the timer for when that changed.
    public mutating func add(_ deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let index = pending.firstIndex { $0 >= deadline } ?? pending.endIndex
        guard index == pending.endIndex || pending[index] != deadline else { return nil }
        pending.insert(deadline, at: index)
        return index == 0 ? deadline : nil
    }

    /// The timer fired at `now`: drops what is due; returns the instant to arm it for next, if any.
    public mutating func fired(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        pending.removeAll { $0 <= now }
        return pending.first
    }

    public mutating func removeAll() {
        pending.removeAll()
    }
}
