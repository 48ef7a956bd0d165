/// A `Duration` in whole units, for the system calls and formats that count in
/// them (a `poll` timeout, a `timespec`, `WATCHDOG_USEC`, a PipeWire timer).
/// The one place the daemon takes a duration apart; code that imports NIO uses
/// `TimeAmount(_: Duration)` instead, and a `Double` of seconds is
/// `duration / .seconds(1)`.
extension Duration {
    /// Whole nanoseconds, clamped to `Int64`'s range. `.up` for a timer or a
    /// timeout that must not end before the duration has passed.
    public func inNanoseconds(rounded rule: FloatingPointRoundingRule = .towardZero) -> Int64 {
        whole(unitAttoseconds: 1_000_000_000, rounded: rule)
    }

    /// Whole microseconds, clamped to `Int64`'s range.
    public func inMicroseconds(rounded rule: FloatingPointRoundingRule = .towardZero) -> Int64 {
        whole(unitAttoseconds: 1_000_000_000_000, rounded: rule)
    }

    /// Whole milliseconds, clamped to `Int64`'s range.
    public func inMilliseconds(rounded rule: FloatingPointRoundingRule = .towardZero) -> Int64 {
        whole(unitAttoseconds: 1_000_000_000_000_000, rounded: rule)
    }

    private func whole(unitAttoseconds unit: Int64, rounded rule: FloatingPointRoundingRule) -> Int64 {
        // The components share the duration's sign: -1.5 s is (-1 s, -0.5e18 as).
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000_000_000_000 / unit)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (part, rest) = attoseconds.quotientAndRemainder(dividingBy: unit)
        let away: Bool
        switch rule {
        case .towardZero: away = false
        case .up: away = rest > 0
        case .down: away = rest < 0
        case .awayFromZero: away = rest != 0
        case .toNearestOrAwayFromZero: away = rest.magnitude * 2 >= unit.magnitude
        // (`scaled` is a multiple of 1,000: the total's parity is the part's.)
        case .toNearestOrEven: away = rest.magnitude * 2 > unit.magnitude || (rest.magnitude * 2 == unit.magnitude && part & 1 != 0)
        @unknown default: away = rest.magnitude * 2 >= unit.magnitude
        }
        let step: Int64 = away ? (rest < 0 ? -1 : 1) : 0
        let (total, sumOverflow) = scaled.addingReportingOverflow(part + step)
        guard !sumOverflow else { return scaled < 0 ? .min : .max }
        return total
    }
}
