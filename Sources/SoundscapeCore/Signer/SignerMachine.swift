/// Decides what happens to the signer host, like an init system would: start
/// it while wanted, restart it with exponential backoff when it exits, give up
/// after a crash loop, stop it with SIGTERM then SIGKILL, and treat a silent
/// one as hung.
///
/// Pure: process facts and `now` go in, actions come out; backoff timing is
/// tested with made-up instants.
public struct SignerMachine: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var backoffInitial: Duration = .seconds(1)
        public var backoffMaximum: Duration = .seconds(60)
        /// An instance that stayed up this long resets the backoff and the crash-loop count.
        public var stableAfter: Duration = .seconds(30)
        /// Failures in a row (each quicker than `stableAfter`) before giving up until the next `play`.
        public var crashLoopLimit = 5
        public var stopTimeout: Duration = .seconds(5)
        public var livenessTimeout: Duration?

        public init() {}
    }

    public enum Input: Sendable, Equatable {
        case setWanted(Bool)
        /// The user pressed play: a failed signer gets a fresh start.
        case resetFailure
        case spawned(pid: Int32)
        case spawnFailed(String)
        case exited(ExitReason)
        /// A `heartbeat` line on the signer's stdout.
        case heartbeat
        case tick
    }

    public enum Action: Sendable, Equatable {
        case spawn
        /// SIGTERM to the instance's whole process group.
        case terminate
        /// SIGKILL to the instance's whole process group.
        case kill
        case scheduleTick(at: ContinuousClock.Instant)
        case emit(EventReason, message: String?)
    }

    enum Phase: Sendable, Equatable {
        case idle
        case starting
        case running(pid: Int32, since: ContinuousClock.Instant, lastHeartbeat: ContinuousClock.Instant)
        /// `killAt` is nil once SIGKILL went out; `restart` says what follows the exit.
        case stopping(pid: Int32, since: ContinuousClock.Instant, killAt: ContinuousClock.Instant?, restart: Restart)
        case waiting(until: ContinuousClock.Instant)
        case failed
    }

    enum Restart: Sendable, Equatable {
        /// Stopped on purpose: nothing follows (unless wanted again meanwhile).
        case none
        /// Stopped because it hung: the exit counts as a failure.
        case afterFailure
    }

    /// Timing and limits; `reconfigure` (a reload) changes them.
    public private(set) var configuration: Configuration
    private(set) var phase: Phase = .idle
    public private(set) var wanted = false
    private var backoff: Backoff
    private var consecutiveFailures = 0
    private var restarts = 0
    private var lastExit: String?

    public init(configuration: Configuration) {
        self.configuration = configuration
        backoff = Backoff(initial: configuration.backoffInitial, maximum: configuration.backoffMaximum)
    }

    /// New timing and limits (a reload): they apply from the next decision; the
    /// backoff starts again from the new first delay.
    public mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
        backoff = Backoff(initial: configuration.backoffInitial, maximum: configuration.backoffMaximum)
    }

    public var status: SignerStatus {
        switch phase {
        case .idle: SignerStatus(state: .stopped, pid: nil, restarts: restarts, lastExit: lastExit)
        case .starting: SignerStatus(state: .starting, pid: nil, restarts: restarts, lastExit: lastExit)
        case .running(let pid, _, _): SignerStatus(state: .running, pid: Int(pid), restarts: restarts, lastExit: lastExit)
        case .stopping(let pid, _, _, _): SignerStatus(state: .stopping, pid: Int(pid), restarts: restarts, lastExit: lastExit)
        case .waiting: SignerStatus(state: .restarting, pid: nil, restarts: restarts, lastExit: lastExit)
        case .failed: SignerStatus(state: .failed, pid: nil, restarts: restarts, lastExit: lastExit)
        }
    }

    public mutating func handle(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .setWanted(let newValue):
            if newValue && !wanted { startSession() }
            wanted = newValue

        case .resetFailure:
            if phase == .failed { phase = .idle }
            startSession()

        case .spawned(let pid):
            phase = .running(pid: pid, since: now, lastHeartbeat: now)
            actions.append(.emit(.signerStarted, message: "pid \(pid)"))
            if let liveness = configuration.livenessTimeout { actions.append(.scheduleTick(at: now + liveness)) }

        case .spawnFailed(let reason):
            lastExit = "could not start: \(reason)"
            actions.append(.emit(.signerExited, message: lastExit))
            actions += failed(now: now, uptime: .zero)

        case .exited(let reason):
            lastExit = reason.description
            switch phase {
            case .stopping(_, let since, _, .afterFailure):
                actions.append(.emit(.signerExited, message: lastExit))
                actions += failed(now: now, uptime: now - since)
            case .stopping:
                phase = .idle
                actions.append(.emit(.signerStopped, message: lastExit))
            case .running(_, let since, _):
                actions.append(.emit(.signerExited, message: lastExit))
                actions += wanted ? failed(now: now, uptime: now - since) : []
                if !wanted { phase = .idle }
            default:
                break
            }

        case .heartbeat:
            if case .running(let pid, let since, _) = phase {
                phase = .running(pid: pid, since: since, lastHeartbeat: now)
                if let liveness = configuration.livenessTimeout { actions.append(.scheduleTick(at: now + liveness)) }
            }

        case .tick:
            switch phase {
            case .stopping(let pid, let since, let killAt?, let restart) where now >= killAt:
                phase = .stopping(pid: pid, since: since, killAt: nil, restart: restart)
                actions.append(.kill)
            case .waiting(let until) where now >= until:
                phase = .idle
            case .running(let pid, let since, let lastHeartbeat):
                if let liveness = configuration.livenessTimeout, now - lastHeartbeat >= liveness {
                    actions.append(.emit(.signerHung, message: "no heartbeat for \(Self.seconds(now - lastHeartbeat)) s"))
                    let killAt = now + configuration.stopTimeout
                    phase = .stopping(pid: pid, since: since, killAt: killAt, restart: .afterFailure)
                    actions += [.terminate, .scheduleTick(at: killAt)]
                }
            default:
                break
            }
        }
        return actions + reconcile(now: now)
    }

    /// A new session (play after stop, or a retry after `failed`): counters start afresh.
    private mutating func startSession() {
        consecutiveFailures = 0
        restarts = 0
        backoff.reset()
        if phase == .failed { phase = .idle }
    }

    /// After an unwanted exit: back off and retry, or give up after a crash loop.
    private mutating func failed(now: ContinuousClock.Instant, uptime: Duration) -> [Action] {
        guard wanted else {
            phase = .idle
            return []
        }
        if uptime >= configuration.stableAfter {
            consecutiveFailures = 0
            backoff.reset()
        }
        consecutiveFailures += 1
        if consecutiveFailures >= configuration.crashLoopLimit {
            phase = .failed
            return [.emit(.signerFailed, message: "\(consecutiveFailures) failures in a row; not restarting until the next play")]
        }
        let delay = backoff.next()
        restarts += 1
        phase = .waiting(until: now + delay)
        return [.emit(.signerRestarting, message: "restarting in \(Self.seconds(delay)) s"), .scheduleTick(at: now + delay)]
    }

    private mutating func reconcile(now: ContinuousClock.Instant) -> [Action] {
        switch (wanted, phase) {
        case (true, .idle):
            phase = .starting
            return [.spawn]
        case (false, .running(let pid, let since, _)):
            let killAt = now + configuration.stopTimeout
            phase = .stopping(pid: pid, since: since, killAt: killAt, restart: .none)
            return [.terminate, .scheduleTick(at: killAt)]
        case (false, .stopping(let pid, let since, let killAt, .afterFailure)):
            phase = .stopping(pid: pid, since: since, killAt: killAt, restart: .none)
            return []
        case (false, .waiting):
            phase = .idle
            return [.emit(.signerStopped, message: nil)]
        case (false, .failed):
            phase = .idle
            return []
        default:
            return []
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds)" : "\(seconds).\(tenths)"
    }
}
