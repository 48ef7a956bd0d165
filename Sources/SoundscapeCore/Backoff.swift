/// Exponential backoff for retries (reconnecting to PipeWire, restarting the
/// signer): the first retry is quick, repeated failures wait longer, capped so
/// recovery is never more than `maximum` away once the cause is gone.
public struct Backoff: Sendable, Equatable {
    public let initial: Duration
    public let maximum: Duration
    public let multiplier: Int
    /// The delay the last `next()` returned, or nil after `reset()`.
    public private(set) var current: Duration?

    public init(initial: Duration, maximum: Duration, multiplier: Int = 2) {
        precondition(initial > .zero && maximum >= initial && multiplier >= 1)
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
    }

    /// The delay before the next attempt.
    public mutating func next() -> Duration {
        let delay = current.map { min($0 * multiplier, maximum) } ?? initial
        current = delay
        return delay
    }

    /// After a success: the next failure starts again from `initial`.
    public mutating func reset() {
        current = nil
    }
}
