/// The signer's status line: the last `STATUS=` it sent, or the first line a passing
/// health command printed. Status shows it at once; the `signerStatus` event that tells
/// subscribers goes out at most once per `interval`, with the newest line, so a signer
/// that rewrites its status in a loop cannot flood every subscriber.
///
/// A line says what is true only while what said it stands: one from a passing check
/// goes once a later check fails (status must not show "relays connected" under
/// "unhealthy"), and every line goes when its instance ends.
///
/// A part of `SignerMachine`; pure, like the machine.
struct SignerStatusLine: Sendable {
    /// Who said the line.
    enum Source: Sendable, Equatable {
        /// The signer itself (`STATUS=`).
        case signer
        /// A passing health check's output.
        case check
    }

    let interval: Duration
    private(set) var line: String?
    private var source: Source?
    /// The line the last event carried.
    private var announced: String?
    private var lastEventAt: ContinuousClock.Instant?
    /// A newer line waits for the interval to end (a tick is scheduled).
    private var pending = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// New text; one with nothing left once cleaned keeps the old line.
    mutating func set(_ text: String, from source: Source, now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard let clean = SignerStatus.line(text) else { return [] }
        line = clean
        self.source = source
        return announce(now: now)
    }

    /// A check failed: a line a passing check printed no longer holds.
    mutating func checkFailed() {
        guard source == .check else { return }
        forget()
    }

    /// The instance ended: nothing it (or a check of it) said holds for the next.
    mutating func instanceEnded() {
        forget()
    }

    private mutating func forget() {
        line = nil
        source = nil
        announced = nil
        pending = false
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
