/// The sleep timer: at bedtime the sound fades away and the keep-alive goes on
/// without it, exactly as at volume off (the signer runs and is checked, the
/// stream goes inactive, the sink may suspend). A plain timer that stopped
/// the player would stop the keep-alive too.
///
/// The fade takes the last third of the time, at most `longestFade`. Once
/// asleep, nothing sounds until the user wakes it (`play`): not the
/// soundscape, and not the signer-down cue either, which would be a chime at
/// 3 a.m.; a signer that goes down meanwhile is still announced (an event,
/// and the desktop companion's notification), and the cue sounds on waking if
/// signing is still down.
///
/// Pure: the caller passes `now` and carries out the actions.
public struct SleepTimer: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case off
        /// Counting down; the sound starts to fade at `fadeStarts`.
        case counting(fadeStarts: ContinuousClock.Instant, ends: ContinuousClock.Instant)
        /// The sound dims, to silence at `ends`.
        case fading(ends: ContinuousClock.Instant)
        /// The time is up: silent until woken.
        case asleep
    }

    public enum Action: Sendable, Equatable {
        /// Ask for a tick at this instant.
        case scheduleTick(at: ContinuousClock.Instant)
        /// Dim the sound to silence, evenly over this long.
        case dim(over: Duration)
        /// Bring the dimmed sound back to full (briefly ramped, never a step).
        case undim
    }

    /// The longest fade, whatever the time set.
    public static let longestFade: Duration = .seconds(60)
    /// The shortest and longest times a user may set.
    public static let shortest: Duration = .seconds(1)
    public static let longest: Duration = .seconds(24 * 3600)

    public private(set) var state: State = .off

    public init() {}

    /// How long the fade of a timer of `duration` takes: its last third, at most a minute.
    public static func fadeLength(of duration: Duration) -> Duration {
        min(duration / 3, longestFade)
    }

    /// When the time is up, while a timer counts or fades.
    public var ends: ContinuousClock.Instant? {
        switch state {
        case .counting(_, let ends), .fading(let ends): ends
        case .off, .asleep: nil
        }
    }

    public var isAsleep: Bool { state == .asleep }

    /// Whether the sound is dimmed (or dimming) by the timer now.
    public var isDimming: Bool {
        switch state {
        case .fading, .asleep: true
        case .off, .counting: false
        }
    }

    /// Sets (or sets again) the timer to end `duration` from now.
    public mutating func set(_ duration: Duration, now: ContinuousClock.Instant) -> [Action] {
        let undim: [Action] = isDimming ? [.undim] : []
        let ends = now + duration
        let fadeStarts = ends - Self.fadeLength(of: duration)
        state = .counting(fadeStarts: fadeStarts, ends: ends)
        return undim + [.scheduleTick(at: fadeStarts)]
    }

    /// Cancels the timer (`sleep off`), or wakes the sound (`play`), or ends it with the session.
    public mutating func cancel() -> [Action] {
        let undim: [Action] = isDimming ? [.undim] : []
        state = .off
        return undim
    }

    /// Time passed: the fade begins, or the time is up.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .counting(let fadeStarts, let ends) where now >= fadeStarts:
            if now >= ends {
                state = .asleep
                return [.dim(over: .zero)]
            }
            state = .fading(ends: ends)
            return [.dim(over: ends - now), .scheduleTick(at: ends)]
        case .fading(let ends) where now >= ends:
            state = .asleep
            return []
        default:
            return []
        }
    }

    // MARK: Durations as the user writes them

    /// Reads `90s`, `45m`, `1h30m`, `2h15m30s`: hours, minutes and seconds, in that
    /// order, each at most once; nil for anything else, or outside `shortest…longest`.
    public static func parse(_ text: String) -> Duration? {
        var total: Int64 = 0
        var number: Int64?
        var lastUnit = -1
        let units: [Character: (order: Int, seconds: Int64)] = ["h": (0, 3600), "m": (1, 60), "s": (2, 1)]
        for character in text {
            if let digit = character.wholeNumberValue, character.isASCII {
                let value = (number ?? 0) * 10 + Int64(digit)
                guard value <= 1_000_000 else { return nil }
                number = value
            } else if let unit = units[character], let value = number, unit.order > lastUnit {
                total += value * unit.seconds
                lastUnit = unit.order
                number = nil
            } else {
                return nil
            }
        }
        guard number == nil, lastUnit >= 0 else { return nil }
        let duration = Duration.seconds(total)
        guard duration >= shortest, duration <= longest else { return nil }
        return duration
    }

    /// What `parse` reads, for an error message.
    public static let formatHelp = "a time such as 90s, 45m or 1h30m (1s to 24h)"

    /// `1h30m`, `45m`, `1m30s`, `20s`: whole seconds, the largest units first.
    public static func describe(_ duration: Duration) -> String {
        let total = max(duration.components.seconds, 0)
        let (hours, minutes, seconds) = (total / 3600, total % 3600 / 60, total % 60)
        var text = ""
        if hours > 0 { text += "\(hours)h" }
        if minutes > 0 { text += "\(minutes)m" }
        if seconds > 0 || text.isEmpty { text += "\(seconds)s" }
        return text
    }
}
