import Glibc
import Logging
import SoundscapeCore
import SoundscapeSystem

/// Keeps the signer host alive for the player: runs `SignerMachine` and
/// carries out what it decides that concerns the process (spawn, the stop
/// signal, SIGKILL, a health probe), tracking the running instance. The rest of
/// the machine's actions — the events to publish, when to tick again, whether
/// signing is up (`.availability`) — it returns as they are, for the player to
/// perform, so signer events go out in order with the player's own. Whether the
/// signer is wanted is the machine's rule (`SignerMachine.wanted`); this only
/// reports the session, the shutdown and a retirement to it.
///
/// It also watches for the machine waking from a suspend (`ClockJumpWatch`,
/// judged by `SleepDetector`): the machine then probes the signer at once.
///
/// Inputs that carrying out an action raises (a spawn's pid, a spawn that failed)
/// are never fed to the machine in the middle of its actions: they wait in the
/// inbox until the actions are done, as `Player.apply` does for its machine.
///
/// The health probe is owned: at most one runs, and when the machine says its
/// instance is over (`.cancelProbe`), or the supervisor retires, it is cancelled
/// (its process group killed), so no probe outlives what it was checking.
///
/// Owned and used by the `Player` actor only (not Sendable). Generic over its host, so
/// a test drives it with one that starts no process (SignerSupervisorTests).
final class SignerSupervisor<Host: SignerHosting> {
    typealias Fact = SignerFact<Host.Spawned>

    /// The machine's actions the player performs (`.emit`, `.scheduleTick`, `.availability`):
    /// the others are carried out here.
    typealias PlayerActions = [SignerMachine.Action]

    private var machine: SignerMachine
    private let host: Host
    private let logger: Logger
    /// How a running instance's facts reach the player (and so, this supervisor).
    private let report: @Sendable (Fact) async -> Void
    private var instance: RunningSigner?
    /// Numbers the instances, and says which facts are stale (`SignerInstances`).
    private var instances = SignerInstances()
    /// Inputs waiting for the actions under way to finish; the one being handled is first.
    private var inbox: [SignerMachine.Input] = []
    /// The spawn under way, if any (its result comes back as `SignerFact.spawned`).
    private var spawning: Task<Void, Never>?
    /// The probe running now, if any: cancelled when its instance ends or on retire.
    private var probe: (instance: Int, task: Task<Void, Never>, cancellation: SignerProbe.Cancellation)?
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    /// The player's clock.
    private let now: @Sendable () -> ContinuousClock.Instant
    private var sleepDetector = SleepDetector()
    /// A check failing every interval for days must not fill the journal.
    private let probeFailures: RateLimitedLog
    private let clockWatch: ClockJumpWatch?

    init(
        host: Host, logger: Logger, now: @escaping @Sendable () -> ContinuousClock.Instant,
        report: @escaping @Sendable (Fact) async -> Void
    ) {
        self.host = host
        self.logger = logger
        self.now = now
        self.report = report
        probeFailures = RateLimitedLog(burst: 10, per: .seconds(600)) { logger.notice("\($0)") }
        machine = SignerMachine(configuration: Self.machine(host.configuration, host: host))
        _ = sleepDetector.observe(ClockJumpWatch.reading())
        clockWatch = ClockJumpWatch { reading in
            Task { await report(.clock(reading)) }
        }
    }

    deinit {
        clockWatch?.stop()
        cancelProbe()
    }

    /// The machine's configuration: the settings', and whether W^X reaches the signer from
    /// outside (a unit that imposes it on every process), so a crash at start is named right.
    private static func machine(_ configuration: SignerConfiguration, host: Host) -> SignerMachine.Configuration {
        var machine = configuration.machine
        machine.writeExecuteDenied = machine.writeExecuteDenied || host.writeExecuteDeniedFromOutside
        return machine
    }

    /// A reloaded configuration: the process settings apply at the signer's next
    /// start, its timing, limits and health check at once.
    func reconfigure(_ configuration: SignerConfiguration) -> PlayerActions {
        host.reconfigure(configuration)
        return drain(first: machine.reconfigure(Self.machine(configuration, host: host), now: now()))
    }

    var status: SignerStatus { machine.status }
    var wanted: Bool { machine.wanted }
    /// Why signing is down, nil while it is up (see `SignerDownVerdict`).
    var downReason: String? { machine.downReason }

    /// Whether the user wants the keep-alive session (`PlayerMachine`'s `.signerSession`).
    func session(_ wanted: Bool) -> PlayerActions {
        handle(.session(wanted))
    }

    /// The daemon shuts down: the signer is stopped, never to start again.
    func shutdown() -> PlayerActions {
        handle(.shutdown)
    }

    /// A reload removed the signer host: it is stopped, never to start again, and no probe runs.
    func retire() -> PlayerActions {
        defer { cancelProbe() }
        return handle(.retire)
    }

    /// A press of play is a fresh chance for a signer that had given up.
    func resetFailure() -> PlayerActions {
        handle(.resetFailure)
    }

    func tick() -> PlayerActions {
        handle(.tick)
    }

    /// A fact from a running instance; facts of an instance already replaced are stale.
    func handle(_ fact: Fact) -> PlayerActions {
        switch fact {
        case .spawned(let id, let result):
            spawning = nil
            guard instances.isCurrent(id) else {
                // Nobody waits for it any more (cannot happen while the machine is starting, but a
                // process must never be left behind).
                if case .success(let spawned) = result { host.discard(spawned) }
                return []
            }
            switch result {
            case .success(let spawned):
                let started = host.attach(spawned, instance: id, report: report)
                instance = started
                logger.info("signer host started", metadata: ["pid": "\(started.pid)"])
                return handle(.spawned(instance: id, pid: started.pid))
            case .failure(let error):
                instances.end()
                logger.error("cannot start the signer host: \(error)")
                return handle(.spawnFailed("\(error)"))
            }
        case .heartbeat(let id):
            guard instances.isCurrent(id) else { return [] }
            return handle(.heartbeat)
        case .exited(let id, let reason):
            guard instances.isCurrent(id) else { return [] }
            instance = nil
            instances.end()
            return handle(.exited(reason))
        case .notify(let id, let notification):
            guard instances.isCurrent(id) else { return [] }
            return handle(.notify(notification))
        case .probed(let id, let result):
            // The machine judges staleness (its instance may be over before the process is).
            if probe?.instance == id { probe = nil }
            if case .failed(let reason) = result { probeFailures("signer health check failed: \(reason)") }
            return handle(.probeFinished(instance: id, result))
        case .clock(let reading):
            guard let slept = sleepDetector.observe(reading) else { return [] }
            logger.notice("the machine slept \(SignerMachine.seconds(slept)) s; checking the signer now")
            return handle(.resumed(slept: slept))
        }
    }

    /// Resumes `waiter` once no instance is left (at once if none runs).
    func whenStopped(_ waiter: CheckedContinuation<Void, Never>) {
        if instance == nil { waiter.resume() } else { stopWaiters.append(waiter) }
    }

    var hasInstance: Bool { instance != nil }

    private func handle(_ input: SignerMachine.Input) -> PlayerActions {
        inbox.append(input)
        // An input raised by an action under way waits for the drain that is running.
        guard inbox.count == 1 else { return [] }
        return drain(first: [])
    }

    /// Performs `actions` (a reload's, which is no input), then every input in the inbox
    /// in turn, each one's actions before the next goes in.
    private func drain(first actions: [SignerMachine.Action]) -> PlayerActions {
        var forPlayer = actions.compactMap(perform)
        while let next = inbox.first {
            forPlayer += machine.handle(next, now: now()).compactMap(perform)
            inbox.removeFirst()
        }
        if instance == nil, machine.status.state == .stopped || machine.status.state == .failed {
            for waiter in stopWaiters { waiter.resume() }
            stopWaiters.removeAll()
        }
        return forPlayer
    }

    private func cancelProbe() {
        probe?.cancellation.cancel()
        probe = nil
    }

    /// Carries out an action on the process; returns one that is the player's to perform.
    private func perform(_ action: SignerMachine.Action) -> SignerMachine.Action? {
        switch action {
        case .spawn:
            // Off the event loop: the answer comes back as a fact (`.spawned`), and the machine
            // is `starting` meanwhile.
            let id = instances.begin()
            let host = self.host
            let report = self.report
            spawning = Task {
                let result: Result<Host.Spawned, SpawnError>
                do throws(SpawnError) {
                    result = .success(try await host.spawn(instance: id))
                } catch {
                    result = .failure(error)
                }
                await report(.spawned(instance: id, result))
            }
            return nil
        case .terminate(let signal):
            instance?.signal(signal.number)
            return nil
        case .kill:
            instance?.signal(SIGKILL)
            return nil
        case .scheduleTick, .availability:
            return action
        case .emit(let reason, let message):
            if signerWarnings.contains(reason) {
                logger.warning("signer host: \(reason.rawValue)\(message.map { ": \($0)" } ?? "")")
            }
            return action
        case .probe(let id, let timeout):
            cancelProbe()
            let host = self.host
            let report = self.report
            let cancellation = SignerProbe.Cancellation()
            probe = (
                id, Task { await report(.probed(instance: id, await host.probe(timeout: timeout, cancellation: cancellation))) },
                cancellation
            )
            return nil
        case .cancelProbe:
            cancelProbe()
            return nil
        }
    }
}

/// Signer events worth a warning in the log as well.
private let signerWarnings: Set<EventReason> = [.signerExited, .signerFailed, .signerHung, .signerUnhealthy, .signerDown]
