/// Decides what happens to the signer host, like an init system would: start
/// it while wanted, restart it with exponential backoff when it exits, give up
/// after a crash loop (unless told never to), stop it with its stop signal then
/// SIGKILL, treat a silent one as hung, follow what it says in the `sd_notify`
/// protocol, run its health command, and say whether signing is down.
///
/// Pure: process facts and `now` go in, actions come out; timing is tested with
/// made-up instants. Its parts: `SignerHealth` (the health command's schedule and
/// verdict), `SignerStatusLine` (the signer's own words) and `SignerDownVerdict`
/// (the down verdict the sound follows).
public struct SignerMachine: Sendable {
    /// A running instance, as far as the machine knows it.
    struct Running: Sendable, Equatable {
        /// Its number (`SignerInstances`), which every fact about it carries.
        var instance: Int
        var pid: Int32
        var since: ContinuousClock.Instant
        var lastHeartbeat: ContinuousClock.Instant
        var ready: Bool
        /// It sent `STOPPING=1`.
        var stopping = false
        /// Its last `ERRNO=`.
        var errno: Int32?
        /// A health probe passed while it ran.
        var passed = false
    }

    enum Phase: Sendable, Equatable {
        case idle
        case starting
        case running(Running)
        /// `killAt` is nil once SIGKILL went out; `restart` says what follows the exit.
        case stopping(Running, killAt: ContinuousClock.Instant?, restart: Restart)
        case waiting(until: ContinuousClock.Instant)
        case failed
    }

    enum Restart: Sendable, Equatable {
        /// Stopped on purpose: nothing follows (unless wanted again meanwhile).
        case none
        /// Stopped because it hung or was unhealthy: the exit counts as a failure, a
        /// quick one (whatever its uptime) when it never proved healthy.
        case afterFailure(quick: Bool)
    }

    /// Timing and limits; `reconfigure` (a reload) changes them.
    public private(set) var configuration: Configuration
    private(set) var phase: Phase = .idle
    /// Whether the daemon still serves: once it shuts down, or a reload retires the
    /// signer host, the signer is never wanted again.
    public enum Lifetime: Sendable, Equatable {
        case serving, shuttingDown, retired
    }
    public private(set) var lifetime: Lifetime = .serving
    /// The user wants the keep-alive session now.
    private var session = false
    /// A session has begun since the daemon started (what `keepRunning` keeps the signer for).
    private var sessionBegan = false
    /// The keep-running rule, in one place: wanted while a session is wanted, or with
    /// `signer-keep-running` once one began; never after shutdown or retirement.
    public var wanted: Bool {
        lifetime == .serving && (session || (configuration.keepRunning && sessionBegan))
    }
    private var backoff: Backoff
    private var consecutiveFailures = 0
    private var restarts = 0
    private var lastExit: String?
    /// The signal the last instance died of, by name (`SIGTRAP`), nil when it exited.
    private var lastExitSignal: String?
    private var health: SignerHealth
    private var statusLine: SignerStatusLine
    private var verdict: SignerDownVerdict
    /// Ticks asked for and not yet past: the same deadline is asked for once.
    private var scheduled: Set<ContinuousClock.Instant> = []
    /// The liveness deadline a tick is asked for: heartbeats move the deadline, not the tick.
    private var livenessTickAt: ContinuousClock.Instant?

    public init(configuration: Configuration) {
        self.configuration = configuration
        backoff = Backoff(initial: configuration.backoffInitial, maximum: configuration.backoffMaximum)
        health = SignerHealth(check: configuration.health)
        statusLine = SignerStatusLine(interval: configuration.statusEventInterval)
        verdict = SignerDownVerdict(grace: configuration.startGrace)
    }

    /// New timing and limits (a reload): they apply from the next decision; the
    /// backoff starts again from the new first delay.
    public mutating func reconfigure(_ configuration: Configuration, now: ContinuousClock.Instant) -> [Action] {
        let wasWanted = wanted
        self.configuration = configuration
        if wanted && !wasWanted { startSession() }
        backoff = Backoff(initial: configuration.backoffInitial, maximum: configuration.backoffMaximum)
        verdict.grace = configuration.startGrace
        var actions = health.reconfigure(configuration.health, now: now)
        if case .running(let instance) = phase {
            livenessTickAt = nil
            actions += scheduleLiveness(instance)
        }
        return finish(actions + reconcile(now: now), now: now)
    }

    public var status: SignerStatus {
        var status: SignerStatus
        switch phase {
        case .idle: status = SignerStatus(state: .stopped, pid: nil, restarts: restarts, lastExit: lastExit)
        case .starting: status = SignerStatus(state: .starting, pid: nil, restarts: restarts, lastExit: lastExit)
        case .running(let instance):
            let state: SignerStatus.State = instance.ready ? .running : instance.stopping ? .stopping : .starting
            status = SignerStatus(
                state: state, pid: Int(instance.pid), restarts: restarts, lastExit: lastExit,
                ready: instance.ready)
        case .stopping(let instance, _, _):
            status = SignerStatus(state: .stopping, pid: Int(instance.pid), restarts: restarts, lastExit: lastExit)
        case .waiting: status = SignerStatus(state: .restarting, pid: nil, restarts: restarts, lastExit: lastExit)
        case .failed: status = SignerStatus(state: .failed, pid: nil, restarts: restarts, lastExit: lastExit)
        }
        status.health = health.state
        status.lastExitSignal = lastExitSignal
        status.status = statusLine.line
        return status
    }

    /// Signing is down (see `SignerDownVerdict`).
    public var isDown: Bool { verdict.down }

    /// Why signing is down (`failed`, `hung`, `unhealthy`, `not running and ready for N s`), nil while up.
    public var downReason: String? { verdict.down ? verdict.reason : nil }

    public mutating func handle(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        let wasWanted = wanted
        switch input {
        case .session(let wants):
            session = wants
            if wants { sessionBegan = true }

        case .shutdown:
            if lifetime == .serving { lifetime = .shuttingDown }

        case .retire:
            lifetime = .retired

        case .resetFailure:
            // Only a signer that gave up gets a fresh start: a play while it waits to
            // restart (or runs) must not start its backoff and crash count over, or a
            // crash loop pressed at would double from 1 s forever and never reach the limit.
            if phase == .failed { startSession() }

        case .spawned(let number, let pid):
            let instance = Running(
                instance: number, pid: pid, since: now, lastHeartbeat: now, ready: configuration.type == .simple)
            phase = .running(instance)
            livenessTickAt = nil
            actions.append(.emit(.signerStarted, message: "pid \(pid)"))
            actions += scheduleLiveness(instance)
            actions += health.instanceStarted(number, now: now)

        case .spawnFailed(let reason):
            lastExit = "could not start: \(reason)"
            lastExitSignal = nil
            actions.append(.emit(.signerExited, message: lastExit))
            actions += failed(now: now, uptime: .zero)

        case .exited(let reason):
            actions += exited(reason, now: now)

        case .heartbeat:
            heartbeat(now: now)

        case .notify(let notification):
            actions += notified(notification, now: now)

        case .probeFinished(let instance, let result):
            actions += probed(result, instance: instance, now: now)

        case .resumed:
            // The signer was frozen too: its silence while asleep is no hang. Its relays,
            // though, are likely gone: ask the health command now, not an interval later.
            if case .running(var instance) = phase {
                instance.lastHeartbeat = now
                phase = .running(instance)
            }
            actions += health.probeNow(now: now)

        case .tick:
            scheduled = scheduled.filter { $0 > now }
            actions += tick(now: now)
        }
        if wanted && !wasWanted { startSession() }
        return finish(actions + reconcile(now: now), now: now)
    }

    // MARK: Inputs

    private mutating func exited(_ reason: ExitReason, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        lastExit = reason.description
        let instance: Running? =
            switch phase {
            case .running(let instance), .stopping(let instance, _, _): instance
            default: nil
            }
        if let errno = instance?.errno { lastExit! += " (it reported errno \(errno))" }
        lastExitSignal = reason.signalName
        statusLine.instanceEnded()
        // A signal right after the start: name the likely cause and what to change.
        if let instance, case .running = phase,
            let advice = SignerCrash.advice(
                for: reason, uptime: now - instance.since, writeExecuteDenied: configuration.writeExecuteDenied)
        {
            lastExit! += " \(Self.seconds(now - instance.since)) s after it started: \(advice)"
        }
        actions += health.instanceEnded()
        switch phase {
        case .stopping(let instance, _, .afterFailure(let quick)):
            actions.append(.emit(.signerExited, message: lastExit))
            actions += failed(now: now, uptime: quick ? .zero : now - instance.since)
        case .stopping:
            phase = .idle
            actions.append(.emit(.signerStopped, message: lastExit))
        case .running(let instance):
            actions.append(.emit(.signerExited, message: lastExit))
            actions += wanted ? failed(now: now, uptime: now - instance.since) : []
            if !wanted { phase = .idle }
        default:
            break
        }
        return actions
    }

    private mutating func heartbeat(now: ContinuousClock.Instant) {
        guard case .running(var instance) = phase else { return }
        instance.lastHeartbeat = now
        phase = .running(instance)
    }

    private mutating func notified(_ notification: SignerNotification, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .running(var instance):
            if let errno = notification.errno { instance.errno = errno }
            if notification.watchdog { instance.lastHeartbeat = now }
            if notification.stopping, !instance.stopping {
                instance.stopping = true
                instance.ready = false
                actions.append(.emit(.signerStopping, message: nil))
            }
            if notification.ready, !instance.ready {
                instance.ready = true
                instance.stopping = false
                actions.append(.emit(.signerReady, message: nil))
            }
            phase = .running(instance)
            if let text = notification.status { actions += statusLine.set(text, from: .signer, now: now) }
            if notification.watchdogTrigger {
                actions += stopFailed(instance, now: now, quick: false, news: (.signerHung, "it sent WATCHDOG=trigger"))
            }
        case .stopping(var instance, let killAt, let restart):
            if let errno = notification.errno { instance.errno = errno }
            phase = .stopping(instance, killAt: killAt, restart: restart)
            if let text = notification.status { actions += statusLine.set(text, from: .signer, now: now) }
        default:
            break
        }
        return actions
    }

    private mutating func probed(_ result: SignerProbeResult, instance: Int, now: ContinuousClock.Instant) -> [Action] {
        var (actions, outcome) = health.finished(result, instance: instance, now: now)
        switch outcome {
        case .none:
            break
        case .failed(let reason, let count):
            let retries = configuration.health.map { " of \($0.retries)" } ?? ""
            statusLine.checkFailed("health check failed (\(count)\(retries) before unhealthy): \(reason)")
        case .passed(let output, let recovered):
            actions += signs(output: output, now: now)
            if recovered { actions.append(.emit(.signerHealthy, message: nil)) }
        case .degraded(let output, let news):
            // It signs: proof for the down verdict, which degraded never counts against.
            actions += signs(output: output, now: now)
            if news { actions.append(.emit(.signerDegraded, message: output.flatMap(SignerStatus.line))) }
        case .unhealthy(let reason, let count, let restart, let news):
            let message = "\(count) failed health check\(count == 1 ? "" : "s") in a row: \(reason)"
            statusLine.checkFailed("health check fails: \(reason)")
            if restart, case .running(let instance) = phase {
                actions += stopFailed(
                    instance, now: now, quick: !instance.passed,
                    news: news ? (.signerUnhealthy, message) : nil)
            } else if news {
                actions.append(.emit(.signerUnhealthy, message: message))
            }
        }
        return actions
    }

    /// A check said the signer signs (passed, or degraded): the running instance proved
    /// itself, and what the check said is its status line.
    private mutating func signs(output: String?, now: ContinuousClock.Instant) -> [Action] {
        verdict.proven()
        if case .running(var instance) = phase {
            instance.passed = true
            phase = .running(instance)
        }
        return output.map { statusLine.set($0, from: .check, now: now) } ?? []
    }

    private mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions = statusLine.tick(now: now)
        switch phase {
        case .stopping(let instance, let killAt?, let restart) where now >= killAt:
            phase = .stopping(instance, killAt: nil, restart: restart)
            actions.append(.kill)
        case .waiting(let until) where now >= until:
            phase = .idle
        case .running(let instance):
            if let liveness = configuration.livenessTimeout, now - instance.lastHeartbeat >= liveness {
                let silence = "no heartbeat for \(Self.seconds(now - instance.lastHeartbeat)) s"
                actions += stopFailed(instance, now: now, quick: false, news: (.signerHung, silence))
            } else {
                if let due = livenessTickAt, now >= due { livenessTickAt = nil }
                actions += scheduleLiveness(instance)
                actions += health.tick(now: now)
            }
        default:
            break
        }
        return actions
    }

    // MARK: Lifecycle

    /// A new session (play after stop, or a retry after `failed`): counters start afresh.
    private mutating func startSession() {
        consecutiveFailures = 0
        restarts = 0
        backoff.reset()
        if phase == .failed { phase = .idle }
    }

    /// Hung or unhealthy: the stop signal, SIGKILL after the stop timeout, and a restart
    /// with backoff once it has exited.
    private mutating func stopFailed(
        _ instance: Running, now: ContinuousClock.Instant, quick: Bool,
        news: (EventReason, String)?
    ) -> [Action] {
        if news?.0 == .signerHung { verdict.hangDetected() }
        let killAt = now + configuration.stopTimeout
        phase = .stopping(instance, killAt: killAt, restart: .afterFailure(quick: quick))
        var actions = health.instanceEnded()
        actions += news.map { [.emit($0.0, message: $0.1)] } ?? []
        actions += [.terminate(configuration.stopSignal), .scheduleTick(at: killAt)]
        return actions
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
        if configuration.crashLoopLimit > 0, consecutiveFailures >= configuration.crashLoopLimit {
            phase = .failed
            let last = lastExit.map { " (the last: \($0))" } ?? ""
            return [
                .emit(
                    .signerFailed,
                    message:
                        "\(consecutiveFailures) failures in a row\(last): \(Settings.signerCrashLimit.key) reached; not restarting until the next play"
                )
            ]
        }
        let delay = backoff.next()
        restarts += 1
        phase = .waiting(until: now + delay)
        return [.emit(.signerRestarting, message: "restarting in \(Self.seconds(delay)) s"), .scheduleTick(at: now + delay)]
    }

    /// One tick per liveness deadline: heartbeats only move the deadline, and the tick
    /// that finds it moved asks for the next, so a flood of pings costs no timers.
    private mutating func scheduleLiveness(_ instance: Running) -> [Action] {
        guard let liveness = configuration.livenessTimeout, livenessTickAt == nil else { return [] }
        let due = instance.lastHeartbeat + liveness
        livenessTickAt = due
        return [.scheduleTick(at: due)]
    }

    private mutating func reconcile(now: ContinuousClock.Instant) -> [Action] {
        switch (wanted, phase) {
        case (true, .idle):
            phase = .starting
            return [.spawn]
        case (false, .running(let instance)):
            let killAt = now + configuration.stopTimeout
            phase = .stopping(instance, killAt: killAt, restart: .none)
            return health.instanceEnded() + [.terminate(configuration.stopSignal), .scheduleTick(at: killAt)]
        case (false, .stopping(let instance, let killAt, .afterFailure)):
            phase = .stopping(instance, killAt: killAt, restart: .none)
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

    /// The verdict after every input, and each deadline asked for once.
    private mutating func finish(_ actions: [Action], now: ContinuousClock.Instant) -> [Action] {
        if !wanted, phase == .idle { health.sessionEnded() }
        let up: Bool = if case .running(let instance) = phase { instance.ready } else { false }
        let facts = SignerDownVerdict.Facts(
            wanted: wanted, failed: phase == .failed, up: up,
            unhealthy: health.state == .unhealthy,
            healthChecked: configuration.health != nil)
        return (actions + verdict.evaluate(facts, now: now)).filter { action in
            guard case .scheduleTick(let at) = action else { return true }
            return scheduled.insert(at).inserted
        }
    }

    public static func seconds(_ duration: Duration) -> String {
        let tenths = duration.inMilliseconds() / 100
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
