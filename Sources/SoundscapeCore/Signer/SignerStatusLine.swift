/// The signer's status line: the last `STATUS=` it sent, or the first line a passing
/// health command printed. Status shows it at once; the `signerStatus` event that tells
/// subscribers goes out at most once per `interval`, with the newest line, so a signer
/// that rewrites its status in a loop cannot flood every subscriber.
///
/// A line says what is true only while what said it stands: one from a passing check
/// is replaced by the failure once a later check fails (status must show neither
/// "relays connected" under "unhealthy", nor nothing beside a health still `healthy`
/// while the retries run), and every line goes when its instance ends.
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

    /// A check failed, and `words` say how: they replace a line a passing check printed,
    /// which no longer holds; the signer's own words stay (it said them, and still may).
    /// Quietly: status shows them at once, and the next event carries them, but no
    /// `signerStatus` event of their own (`signerUnhealthy` is the news; a check that
    /// keeps failing must not be an event every interval).
    mutating func checkFailed(_ words: String) {
        guard source != .signer, let clean = SignerStatus.line(words) else { return }
        line = clean
        source = .check
        announced = clean
        pending = false
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
