import Glibc
import Logging
import SoundscapeCore

/// Keeps the signer host alive for the player: runs `SignerMachine` and
/// carries out what it decides that concerns the process (spawn, SIGTERM,
/// SIGKILL), tracking the running instance. What concerns the player — the
/// events to publish, when to tick again — comes back as `Effect`s, which the
/// player performs, so signer events go out in order with the player's own.
///
/// Owned and used by the `Player` actor only (not Sendable).
final class SignerSupervisor {
    enum Effect: Sendable, Equatable {
        case emit(EventReason, message: String?)
        case scheduleTick(at: ContinuousClock.Instant)
    }

    private var machine: SignerMachine
    private let host: SignerHost
    private let logger: Logger
    /// How a running instance's facts reach the player (and so, this supervisor).
    private let report: @Sendable (SignerFact) async -> Void
    private var instance: SignerInstance?
    private var nextInstanceID = 0
    /// With keep-running, the signer stays up once a session has started.
    private var sessionStarted = false
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    /// A reload removed the signer host: it is being stopped for good, and must not start again.
    private var retired = false
    /// The player's clock.
    private let now: @Sendable () -> ContinuousClock.Instant

    init(host: SignerHost, logger: Logger, now: @escaping @Sendable () -> ContinuousClock.Instant,
         report: @escaping @Sendable (SignerFact) async -> Void) {
        self.host = host
        self.logger = logger
        self.now = now
        self.report = report
        machine = SignerMachine(configuration: Self.machineConfiguration(for: host.configuration))
    }

    /// The machine's timing, from the host's configuration.
    static func machineConfiguration(for configuration: SignerConfiguration) -> SignerMachine.Configuration {
        var machineConfiguration = SignerMachine.Configuration()
        machineConfiguration.stopTimeout = configuration.stopTimeout
        machineConfiguration.livenessTimeout = configuration.livenessTimeout
        machineConfiguration.backoffInitial = configuration.restartDelay
        machineConfiguration.backoffMaximum = max(.seconds(60), configuration.restartDelay)
        machineConfiguration.crashLoopLimit = configuration.crashLoopLimit
        return machineConfiguration
    }

    /// A reloaded configuration: the process settings apply at the signer's next
    /// start, its timing and limits at once.
    func reconfigure(_ configuration: SignerConfiguration) {
        host.reconfigure(configuration)
        machine.reconfigure(Self.machineConfiguration(for: configuration))
    }

    var status: SignerStatus { machine.status }
    var wanted: Bool { machine.wanted }

    /// Wanted while the user wants the keep-alive session (or, with keep-running,
    /// once a session began), and never while the daemon shuts down.
    func reconcile(wantsSession: Bool, shuttingDown: Bool) -> [Effect] {
        if wantsSession { sessionStarted = true }
        let wanted = !shuttingDown && !retired && (wantsSession || (host.configuration.keepRunningWhenStopped && sessionStarted))
        guard wanted != machine.wanted else { return [] }
        return handle(.setWanted(wanted))
    }

    /// A reload removed the signer host: from now on it is never wanted.
    func retire() {
        retired = true
    }

    /// A press of play is a fresh chance for a signer that had given up.
    func resetFailure() -> [Effect] {
        handle(.resetFailure)
    }

    func tick() -> [Effect] {
        handle(.tick)
    }

    /// A fact from a running instance; facts of an instance already replaced are stale.
    func handle(_ fact: SignerFact) -> [Effect] {
        switch fact {
        case .heartbeat(let id):
            guard id == instance?.id else { return [] }
            return handle(.heartbeat)
        case .exited(let id, let reason):
            guard id == instance?.id else { return [] }
            instance = nil
            return handle(.exited(reason))
        }
    }

    /// Resumes `waiter` once no instance is left (at once if none runs).
    func whenStopped(_ waiter: CheckedContinuation<Void, Never>) {
        if instance == nil { waiter.resume() } else { stopWaiters.append(waiter) }
    }

    var hasInstance: Bool { instance != nil }

    private func handle(_ input: SignerMachine.Input) -> [Effect] {
        var effects: [Effect] = []
        for action in machine.handle(input, now: now()) {
            effects += perform(action)
        }
        if instance == nil, machine.status.state == .stopped || machine.status.state == .failed {
            for waiter in stopWaiters { waiter.resume() }
            stopWaiters.removeAll()
        }
        return effects
    }

    private func perform(_ action: SignerMachine.Action) -> [Effect] {
        switch action {
        case .spawn:
            nextInstanceID += 1
            do {
                let started = try host.start(instance: nextInstanceID, report: report)
                instance = started
                logger.info("signer host started", metadata: ["pid": "\(started.pid)"])
                return handle(.spawned(pid: started.pid))
            } catch {
                logger.error("cannot start the signer host: \(error)")
                return handle(.spawnFailed("\(error)"))
            }
        case .terminate:
            instance?.signal(SIGTERM)
            return []
        case .kill:
            instance?.signal(SIGKILL)
            return []
        case .scheduleTick(let deadline):
            return [.scheduleTick(at: deadline)]
        case .emit(let reason, let message):
            if reason == .signerExited || reason == .signerFailed || reason == .signerHung {
                logger.warning("signer host: \(reason.rawValue)\(message.map { ": \($0)" } ?? "")")
            }
            return [.emit(reason, message: message)]
        }
    }
}
