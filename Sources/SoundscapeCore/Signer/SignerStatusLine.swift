/// The signer's status line: the last `STATUS=` it sent, or the first line a passing
/// health command printed. Status shows it at once; the `signerStatus` event that tells
/// subscribers goes out at most once per `interval`, with the newest line, so a signer
/// that rewrites its status in a loop cannot flood every subscriber.
///
/// A part of `SignerMachine`; pure, like the machine.
struct SignerStatusLine: Sendable {
    let interval: Duration
    private(set) var line: String?
    /// The line the last event carried.
    private var announced: String?
    private var lastEventAt: ContinuousClock.Instant?
    /// A newer line waits for the interval to end (a tick is scheduled).
    private var pending = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// New text from the signer; one with nothing left once cleaned keeps the old line.
    mutating func set(_ text: String, now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard let clean = SignerStatus.line(text) else { return [] }
        line = clean
        return announce(now: now)
    }

    mutating func tick(now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        pending ? announce(now: now) : []
    }

    private mutating func announce(now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard let line, line != announced else {
            pending = false
            return []
        }
        if let lastEventAt, now - lastEventAt < interval {
            guard !pending else { return [] }
            pending = true
            return [.scheduleTick(at: lastEventAt + interval)]
        }
        pending = false
        announced = line
        lastEventAt = now
        return [.emit(.signerStatus, message: line)]
    }
}
