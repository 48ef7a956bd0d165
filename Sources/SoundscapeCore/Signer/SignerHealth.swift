/// When the health command runs and what its results mean: a part of
/// `SignerMachine`, pure like the machine.
///
/// - A fresh instance is first probed one `interval` after it started; after that a
///   probe starts every `interval`, counted from the start of the one before, so a
///   signer that hangs is found `retries` × `interval` + `timeout` after its last
///   pass at most (when `timeout` ≤ `interval`). At most one probe runs at a time:
///   one still running when another falls due (a slow probe, a resume, a new
///   instance) delays it until it ends.
/// - `retries` failures in a row make the signer unhealthy. With `restartOnUnhealthy`
///   each such streak is reported (it causes a restart, and the next instance gets a
///   fresh count); without, only the change to unhealthy is.
/// - The first pass after that makes it healthy again. A new instance keeps an
///   unhealthy verdict (only a pass proves it signs), but not a healthy or degraded
///   one (its predecessor's pass says nothing about it): that becomes unknown.
/// - A degraded result (a monitoring plugin's WARNING) is a pass that says not all is
///   well: it ends a streak of failures and proves the signer signs, and the health is
///   `degraded` until a check says otherwise.
/// - Results of a probe that ran for an instance that has since ended are dropped
///   (`SignerInstances`' rule), and such a probe is cancelled when its instance ends.
struct SignerHealth: Sendable {
    /// What a probe's result means for the machine.
    enum Verdict: Sendable, Equatable {
        case none
        /// It passed; `recovered` when the signer had been unhealthy or degraded.
        case passed(output: String?, recovered: Bool)
        /// It signs, degraded; `news` when it was not degraded before.
        case degraded(output: String?, news: Bool)
        /// It failed, `count` times in a row, not yet enough to call the signer unhealthy.
        case failed(reason: String, count: Int)
        /// The signer is unhealthy: `restart` it if so configured; `news` when an event is due.
        case unhealthy(reason: String, count: Int, restart: Bool, news: Bool)
    }

    private(set) var check: SignerMachine.HealthConfiguration?
    private(set) var state: SignerStatus.Health = .unknown
    private var failures = 0
    /// The instance probes are for: the one running now (its number, as the daemon's
    /// `SignerInstances` gave it), nil between instances.
    private var current: Int?
    private var running: Bool { current != nil }
    /// The instance the probe now running was started for.
    private var probing: Int?
    /// When the running instance's next probe is due.
    private var dueAt: ContinuousClock.Instant?

    init(check: SignerMachine.HealthConfiguration?) {
        self.check = check
    }

    var isProbing: Bool { probing != nil }

    mutating func instanceStarted(_ instance: Int, now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        current = instance
        failures = 0
        if state == .healthy || state == .degraded { state = .unknown }
        guard let check else { return [] }
        let due = now + check.interval
        dueAt = due
        return [.scheduleTick(at: due)]
    }

    /// The instance is being stopped or has exited: no more probes for it, and one
    /// running for it is cancelled (its result would be stale).
    mutating func instanceEnded() -> [SignerMachine.Action] {
        // No instance is healthy once none runs (status said "restarting healthy" after a
        // SIGKILL); an unhealthy verdict stands until a check of a new one passes.
        if state == .healthy || state == .degraded { state = .unknown }
        let probingIt = probing != nil && probing == current
        current = nil
        dueAt = nil
        return probingIt ? [.cancelProbe] : []
    }

    /// Nobody wants the signer any more: the next session starts with no verdict.
    mutating func sessionEnded() {
        state = .unknown
        failures = 0
    }

    mutating func tick(now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        startIfDue(now: now)
    }

    /// Probe at once (the machine slept; whatever the last probe said is stale).
    mutating func probeNow(now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard running, check != nil else { return [] }
        dueAt = now
        return startIfDue(now: now)
    }

    /// A reload: a check newly configured probes a running instance one interval from
    /// now; one removed forgets its verdict; a shorter interval brings the next probe forward.
    mutating func reconfigure(_ new: SignerMachine.HealthConfiguration?, now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        let old = check
        check = new
        guard let new else {
            state = .unknown
            failures = 0
            dueAt = nil
            return isProbing ? [.cancelProbe] : []
        }
        guard running else { return [] }
        let due = now + new.interval
        if old == nil || (dueAt.map { $0 > due } ?? !isProbing) {
            dueAt = due
            return [.scheduleTick(at: due)]
        }
        return []
    }

    /// The result of the probe of `instance`: one about an instance that is not the current
    /// one (it ended, or was replaced) is stale, and says nothing.
    mutating func finished(
        _ result: SignerProbeResult, instance: Int, now: ContinuousClock.Instant
    ) -> ([SignerMachine.Action], Verdict) {
        let ran = probing
        if probing == instance { probing = nil }
        let fresh = instance == ran && instance == current
        // One that fell due while this one ran (a resume, a new instance) goes now.
        guard fresh, let check else { return (startIfDue(now: now), .none) }
        let verdict: Verdict
        switch result {
        case .passed(let output):
            failures = 0
            let recovered = state == .unhealthy || state == .degraded
            state = .healthy
            verdict = .passed(output: output, recovered: recovered)
        case .degraded(let output):
            failures = 0
            let news = state != .degraded
            state = .degraded
            verdict = .degraded(output: output, news: news)
        case .failed(let reason):
            failures += 1
            if failures < check.retries {
                verdict = .failed(reason: reason, count: failures)
            } else {
                let news = state != .unhealthy || check.restartOnUnhealthy
                state = .unhealthy
                verdict = .unhealthy(reason: reason, count: failures, restart: check.restartOnUnhealthy, news: news)
                if check.restartOnUnhealthy {
                    failures = 0
                    // This instance is being stopped: its next probe would only be killed with it.
                    dueAt = nil
                }
            }
        }
        // The next one was due an interval after this one started: if that has passed
        // (this one ran longer), or another fell due meanwhile (a resume), it goes now.
        return (startIfDue(now: now), verdict)
    }

    private mutating func startIfDue(now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard running, let check, probing == nil, let due = dueAt, now >= due else { return [] }
        guard let instance = current else { return [] }
        probing = instance
        // Every interval, from this start: a probe that ends in time does not push the next one back.
        let next = now + check.interval
        dueAt = next
        return [.probe(instance: instance, timeout: check.timeout), .scheduleTick(at: next)]
    }
}
