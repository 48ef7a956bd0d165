import Foundation
import Testing
import SoundscapeCore

/// Drives a `SignerMachine` with a fake clock: one real instant as the origin,
/// then only durations added to it.
///
/// The lifecycle suites look at the lifecycle: unless `showsVerdict`, what the
/// down verdict adds (`SignerDownVerdict`: its grace tick, `signerDown`,
/// `signerRestored`, `.availability`) is left out of what `send` returns. Its
/// own suite (SignerDownVerdictTests) sees everything.
struct SignerDriver {
    typealias Action = SignerMachine.Action

    var machine: SignerMachine
    let origin: ContinuousClock.Instant
    private(set) var now: ContinuousClock.Instant
    var showsVerdict = false
    /// The instance of the last probe the machine asked for: what `.probeFinished(result)` is about.
    private(set) var lastProbe: Int?

    /// Stands for "the probe in flight" in what tests send and expect (`.probe(timeout:)`,
    /// `.probeFinished(result)`): the driver puts the real instance in, and shows each probe with this.
    static let probeInFlight = -1

    /// The lifecycle suites' grace: long, and unlike any lifecycle deadline, so the
    /// verdict's tick is told apart by its deadline alone.
    static let lifecycleGrace: Duration = .seconds(7777)

    init(
        _ configuration: SignerMachine.Configuration = SignerDriver.configuration(),
        origin: ContinuousClock.Instant = ContinuousClock.now
    ) {
        machine = SignerMachine(configuration: configuration)
        self.origin = origin
        now = origin
    }

    /// Advances the fake clock by `elapsed`, then feeds `input`.
    @discardableResult
    mutating func send(_ input: SignerMachine.Input, after elapsed: Duration = .zero) -> [Action] {
        now = now + elapsed
        return shown(machine.handle(resolved(input), now: now))
    }

    /// Moves the fake clock to `instant` (never backwards), then feeds `input`.
    @discardableResult
    mutating func send(_ input: SignerMachine.Input, at instant: ContinuousClock.Instant) -> [Action] {
        precondition(instant >= now, "the fake clock only moves forwards")
        now = instant
        return shown(machine.handle(resolved(input), now: now))
    }

    private func resolved(_ input: SignerMachine.Input) -> SignerMachine.Input {
        guard case .probeFinished(Self.probeInFlight, let result) = input else { return input }
        return .probeFinished(instance: lastProbe ?? Self.probeInFlight, result)
    }

    /// A reload's new configuration, at the current instant.
    @discardableResult
    mutating func reconfigure(_ configuration: SignerMachine.Configuration) -> [Action] {
        shown(machine.reconfigure(configuration, now: now))
    }

    private mutating func shown(_ actions: [Action]) -> [Action] {
        let actions = actions.map { action -> Action in
            guard case .probe(let instance, let timeout) = action else { return action }
            lastProbe = instance
            return .probe(instance: Self.probeInFlight, timeout: timeout)
        }
        guard !showsVerdict else { return actions }
        // The verdict's deadlines are all at least a grace after the origin; the lifecycle's
        // are never that far out in these suites.
        let graceFromOrigin = origin + machine.configuration.startGrace
        return actions.filter { action in
            switch action {
            case .availability, .emit(.signerDown, _), .emit(.signerRestored, _): false
            case .scheduleTick(let at): at < graceFromOrigin
            default: true
            }
        }
    }

    var status: SignerStatus { machine.status }

    static func configuration(
        crashLoopLimit: Int = 5, stopTimeout: Duration = .seconds(5),
        liveness: Duration? = nil
    ) -> SignerMachine.Configuration {
        var configuration = SignerMachine.Configuration()
        configuration.crashLoopLimit = crashLoopLimit
        configuration.stopTimeout = stopTimeout
        configuration.livenessTimeout = liveness
        configuration.startGrace = lifecycleGrace
        return configuration
    }

    /// Wanted, spawned as `pid`, with the `signerStarted` event already out.
    static func running(pid: Int32 = 100, _ configuration: SignerMachine.Configuration = SignerDriver.configuration()) -> SignerDriver {
        var driver = SignerDriver(configuration)
        precondition(driver.send(.session(true)) == [.spawn])
        driver.send(.spawned(pid: pid), after: .milliseconds(10))
        precondition(driver.status.state == .running)
        return driver
    }

    /// From `.starting`: the instance comes up and dies `uptime` later with status 1.
    /// Returns the actions of the exit.
    mutating func spawnAndCrash(pid: Int32, uptime: Duration = .milliseconds(100)) -> [Action] {
        send(.spawned(pid: pid))
        return send(.exited(.exited(code: 1)), after: uptime)
    }
}

extension [SignerMachine.Action] {
    var reasons: [EventReason] {
        compactMap { if case .emit(let reason, _) = $0 { reason } else { nil } }
    }

    var ticks: [ContinuousClock.Instant] {
        compactMap { if case .scheduleTick(let at) = $0 { at } else { nil } }
    }

    func count(of action: SignerMachine.Action) -> Int { filter { $0 == action }.count }
}

extension SignerMachine.Input {
    /// Instance `pid`: each instance a test spawns has a pid of its own, so it numbers them too.
    static func spawned(pid: Int32) -> Self { .spawned(instance: Int(pid), pid: pid) }
    /// The result of the probe in flight (`SignerDriver` puts its instance in).
    static func probeFinished(_ result: SignerProbeResult) -> Self { .probeFinished(instance: SignerDriver.probeInFlight, result) }
}

extension SignerMachine.Action {
    /// A probe of the instance that runs (`SignerDriver` shows every probe so).
    static func probe(timeout: Duration) -> Self { .probe(instance: SignerDriver.probeInFlight, timeout: timeout) }
}
