import Glibc
import Logging
import SoundscapeCore
import SoundscapeSystem
import Synchronization
import Testing
import TestSupport
@testable import SoundscapeDaemon

/// `SignerSupervisor` with a host that starts no process (issue 36: it had no unit test):
/// what it asks the host for, which facts it takes and which it drops as stale, and
/// what it returns to the player, on a clock the test moves.
@Suite(.timeLimit(.minutes(1))) struct SignerSupervisorTests {
    /// A value shared with the supervisor's tasks and closures.
    final class Locked<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    /// A host that records what it is asked and starts nothing; a probe waits for its cancellation.
    final class FakeHost: SignerHosting {
        struct Spawned: Sendable, Equatable { let instance: Int }
        struct Log: Sendable {
            var spawned: [Int] = []
            var attached: [Int] = []
            var discarded: [Int] = []
            var signals: [(instance: Int, signal: Int32)] = []
            var probes = 0
            var cancelledProbes = 0
        }

        let configuration: SignerConfiguration
        let writeExecuteDeniedFromOutside = false
        let log = Locked(Log())

        init(_ configuration: SignerConfiguration) {
            self.configuration = configuration
        }

        func reconfigure(_ configuration: SignerConfiguration) {}

        func spawn(instance: Int) async throws(SpawnError) -> Spawned {
            log.withLock { $0.spawned.append(instance) }
            return Spawned(instance: instance)
        }

        func attach(_ spawned: Spawned, instance: Int, report: @escaping @Sendable (SignerFact<Spawned>) async -> Void)
            -> RunningSigner
        {
            log.withLock { $0.attached.append(instance) }
            return RunningSigner(
                id: instance, pid: Int32(1000 + instance),
                signal: { [log] signal in log.withLock { $0.signals.append((instance, signal)) } }, task: Task {})
        }

        func discard(_ spawned: Spawned) {
            log.withLock { $0.discarded.append(spawned.instance) }
        }

        func probe(timeout: Duration, cancellation: SignerProbe.Cancellation) async -> SignerProbeResult {
            log.withLock { $0.probes += 1 }
            await withCheckedContinuation { continuation in
                cancellation.whenCancelled { continuation.resume() }
            }
            log.withLock { $0.cancelledProbes += 1 }
            return .failed("cancelled")
        }
    }

    /// The supervisor, its facts as they come, and the clock it reads.
    final class Rig {
        let host: FakeHost
        let supervisor: SignerSupervisor<FakeHost>
        /// What the host and the supervisor's tasks reported, not yet handled.
        let facts = Locked<[SignerFact<FakeHost.Spawned>]>([])
        let clock: Locked<ContinuousClock.Instant>

        init(_ configuration: SignerConfiguration) {
            host = FakeHost(configuration)
            let clock = Locked(ContinuousClock.now)
            self.clock = clock
            let facts = self.facts
            supervisor = SignerSupervisor(
                host: host, logger: Logger(label: "test"), now: { clock.withLock { $0 } },
                report: { fact in facts.withLock { $0.append(fact) } })
        }

        /// The next fact the host or a task reports, handled; what the supervisor returns.
        @discardableResult
        func nextFact() async throws -> [SignerMachine.Action] {
            // An async condition: the polling sleeps (Task.sleep) and leaves the threads to the tasks it waits for.
            try await waitUntil(timeout: .seconds(5), "a fact from the supervisor's tasks") { [facts] () async -> Bool in
                !facts.withLock { $0.isEmpty }
            }
            return supervisor.handle(facts.withLock { $0.removeFirst() })
        }

        func advance(_ duration: Duration) {
            clock.withLock { $0 = $0 + duration }
        }
    }

    static func configuration(health: Bool = false) -> SignerConfiguration {
        var values = SettingValues()
        if health { values.set(Settings.signerHealthCommand, ["/bin/true"]) }
        return SignerConfiguration(command: ["/bin/signer"], values: values)
    }

    @Test func aSessionSpawnsAnExitRestartsAndStaleFactsAreDropped() async throws {
        let rig = Rig(Self.configuration())
        _ = rig.supervisor.session(true)
        try await rig.nextFact()
        #expect(rig.host.log.withLock { $0.attached } == [1])
        #expect(rig.supervisor.status.state == .running)
        #expect(rig.supervisor.status.pid == 1001)

        let exit = rig.supervisor.handle(.exited(instance: 1, .exited(code: 3)))
        #expect(exit.contains(.emit(.signerExited, message: "exited with status 3")), "\(exit)")
        let restartAt = try #require(
            exit.compactMap { if case .scheduleTick(let at) = $0 { at } else { nil } }.min(), "no restart asked for: \(exit)")
        // A fact of the instance that ended is stale: dropped, nothing returned.
        #expect(rig.supervisor.handle(.heartbeat(instance: 1)).isEmpty)
        #expect(rig.supervisor.handle(.exited(instance: 1, .signaled(9))).isEmpty)

        rig.advance(restartAt - rig.clock.withLock { $0 })
        _ = rig.supervisor.tick()
        try await rig.nextFact()
        #expect(rig.host.log.withLock { $0.spawned } == [1, 2])
        #expect(rig.supervisor.status.pid == 1002)
        #expect(rig.supervisor.status.restarts == 1)
        // The first instance's late exit says nothing about the second.
        #expect(rig.supervisor.handle(.exited(instance: 1, .exited(code: 0))).isEmpty)
        #expect(rig.supervisor.status.state == .running)
    }

    @Test func aSpawnNobodyWaitsForIsDiscarded() async throws {
        let rig = Rig(Self.configuration())
        #expect(rig.supervisor.handle(.spawned(instance: 42, .success(.init(instance: 42)))).isEmpty)
        #expect(rig.host.log.withLock { $0.discarded } == [42])
        #expect(rig.host.log.withLock { $0.attached }.isEmpty)
    }

    @Test func shutdownStopsTheInstanceAndReleasesTheWaiterOnceItExited() async throws {
        let rig = Rig(Self.configuration())
        _ = rig.supervisor.session(true)
        try await rig.nextFact()
        _ = rig.supervisor.shutdown()
        #expect(rig.host.log.withLock { $0.signals.map(\.signal) } == [SIGTERM])
        // Released only by the exit (else this waits until the suite's time limit).
        await withCheckedContinuation { continuation in
            rig.supervisor.whenStopped(continuation)
            _ = rig.supervisor.handle(.exited(instance: 1, .signaled(SIGTERM)))
        }
        #expect(!rig.supervisor.hasInstance)
        // Never wanted again: a session after the shutdown starts nothing.
        #expect(rig.supervisor.session(true).isEmpty)
        #expect(rig.host.log.withLock { $0.spawned } == [1])
    }

    @Test func retiringCancelsTheProbeInFlightAndStopsTheInstance() async throws {
        let rig = Rig(Self.configuration(health: true))
        _ = rig.supervisor.session(true)
        try await rig.nextFact()
        // The first check falls due one interval after the start.
        rig.advance(.seconds(10))
        _ = rig.supervisor.tick()
        let log = rig.host.log
        try await waitUntil(timeout: .seconds(5), "the host to run the probe") { () async -> Bool in
            log.withLock { $0.probes } == 1
        }
        _ = rig.supervisor.retire()
        #expect(rig.host.log.withLock { $0.signals.map(\.signal) } == [SIGTERM])
        // The cancelled probe's result comes back, and says nothing.
        #expect(try await rig.nextFact().isEmpty)
        #expect(rig.host.log.withLock { $0.cancelledProbes } == 1)
        #expect(rig.supervisor.status.health == .unknown)
    }
}
