import Synchronization

/// Lets through at most `burst` messages per `interval` and counts the rest,
/// saying how many were held back with the next message let through. For
/// every warning a client or the signer host can trigger at will: a flood of
/// connections or of output lines must not become a flood of log lines (a
/// journal full of them, a disk filled, the CPU spent writing them).
final class RateLimitedLog: Sendable {
    private struct Window {
        var started: ContinuousClock.Instant
        var passed = 0
        var held = 0
    }

    private let burst: Int
    private let interval: Duration
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant
    private let window: Mutex<Window>

    init(
        burst: Int = 10, per interval: Duration = .seconds(60),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        write: @escaping @Sendable (String) -> Void
    ) {
        self.burst = burst
        self.interval = interval
        self.write = write
        self.now = now
        window = Mutex(Window(started: now()))
    }

    func callAsFunction(_ message: String) {
        let time = now()
        let line: String? = window.withLock { window in
            if time - window.started >= interval {
                let held = window.held
                window = Window(started: time)
                window.passed = 1
                return held > 0 ? "\(message) (and \(held) more like it held back in the last \(interval))" : message
            }
            guard window.passed < burst else {
                window.held += 1
                return nil
            }
            window.passed += 1
            return message
        }
        if let line { write(line) }
    }
}
