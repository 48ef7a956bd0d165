/// Tells from two clocks whether the machine slept: `CLOCK_BOOTTIME` counts time
/// spent suspended, `CLOCK_MONOTONIC` does not, so between two readings the first
/// gains on the second by exactly the time asleep. A wall-clock change (NTP, the
/// user setting the date) moves neither.
///
/// Pure: the daemon reads both clocks when the kernel says the wall clock was set,
/// which it also says on every resume (see `ClockJumpWatch`), and feeds the readings here.
public struct SleepDetector: Sendable, Equatable {
    public struct Reading: Sendable, Equatable {
        /// `CLOCK_BOOTTIME`.
        public var boot: Duration
        /// `CLOCK_MONOTONIC`.
        public var monotonic: Duration

        public init(boot: Duration, monotonic: Duration) {
            self.boot = boot
            self.monotonic = monotonic
        }
    }

    /// A smaller gap is scheduling noise between the two readings, not a sleep.
    public let threshold: Duration
    private var last: Reading?

    public init(threshold: Duration = .seconds(1)) {
        self.threshold = threshold
    }

    /// How long the machine slept since the last reading, if it did.
    public mutating func observe(_ reading: Reading) -> Duration? {
        defer { last = reading }
        guard let last else { return nil }
        let slept = (reading.boot - last.boot) - (reading.monotonic - last.monotonic)
        return slept >= threshold ? slept : nil
    }
}
