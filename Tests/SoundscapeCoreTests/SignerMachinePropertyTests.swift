import Foundation
import Testing
import SoundscapeCore

/// Seeded pseudo-random input sequences, with the invariants checked after every step.
@Suite struct SignerMachinePropertyTests {
    typealias D = SignerDriver

    /// What the outside world knows: which process exists, whether a spawn is outstanding.
    struct World {
        var wanted = false
        var pid: Int32?
        var spawnPending = false
        var terminated = false
        var nextPID: Int32 = 1000
        var restartsInSession = 0
        var probing = false
        var down = false
    }

    static let steps: [Duration] = [
        .zero, .milliseconds(100), .milliseconds(999), .seconds(1), .seconds(2), .seconds(5),
        .seconds(10), .seconds(30), .seconds(61),
    ]
    static let reasons: [ExitReason] = [.exited(code: 0), .exited(code: 1), .signaled(9), .signaled(15), .signaled(11)]

    static func input(_ world: inout World, using generator: inout SplitMix64) -> SignerMachine.Input {
        while true {
            switch Int.random(in: 0..<15, using: &generator) {
            case 0, 1: return .session(Bool.random(using: &generator))
            case 2: return .resetFailure
            case 3, 4:
                guard world.spawnPending else { continue }
                if Int.random(in: 0..<5, using: &generator) == 0 { return .spawnFailed("boom") }
                world.nextPID += 1
                return .spawned(pid: world.nextPID)
            case 5, 6:
                guard world.pid != nil else { continue }
                return .exited(reasons.randomElement(using: &generator)!)
            case 7: return .heartbeat
            case 8:
                var notification = SignerNotification()
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: notification.ready = true
                case 1: notification.stopping = true
                case 2: notification.watchdog = true
                case 3: notification.status = "relays: \(Int.random(in: 0..<4, using: &generator))/3"
                default: notification.watchdogTrigger = Int.random(in: 0..<4, using: &generator) == 0
                }
                return .notify(notification)
            case 9, 10:
                guard world.probing else { continue }
                world.probing = false
                return .probeFinished(Bool.random(using: &generator) ? .passed(output: "ok") : .failed("no relay"))
            case 11: return .resumed(slept: .seconds(600))
            default: return .tick
            }
        }
    }

    /// Runs `count` random inputs and returns every invariant violation, described.
    static func violations(
        seed: UInt64, count: Int, configuration: SignerMachine.Configuration,
        seen: inout Set<SignerStatus.State>, emitted: inout Set<EventReason>
    ) -> [String] {
        var generator = SplitMix64(seed: seed)
        var driver = D(configuration)
        driver.showsVerdict = true
        var world = World()
        var found: [String] = []
        for step in 0..<count {
            let input = input(&world, using: &generator)
            let elapsed = steps.randomElement(using: &generator)!
            let actions = driver.send(input, after: elapsed)
            var problems: [String] = []

            // What the input itself means for the outside world.
            var sessionStarted = false
            switch input {
            case .session(let value):
                sessionStarted = value && !world.wanted
                world.wanted = value
            case .resetFailure:
                sessionStarted = true
            case .spawned(_, let pid):
                world.spawnPending = false
                world.pid = pid
                world.terminated = false
            case .spawnFailed:
                world.spawnPending = false
            case .exited:
                world.pid = nil
                world.terminated = false
            default:
                break
            }

            for action in actions {
                switch action {
                case .spawn:
                    if world.spawnPending { problems.append("second spawn before spawned/spawnFailed") }
                    if world.pid != nil { problems.append("spawn while an instance is running") }
                    if !world.wanted { problems.append("spawn while not wanted") }
                    world.spawnPending = true
                case .terminate:
                    if world.pid == nil { problems.append("terminate without a process") }
                    if world.terminated { problems.append("second terminate for the same process") }
                    world.terminated = true
                case .kill:
                    if world.pid == nil { problems.append("kill without a process") }
                    if !world.terminated { problems.append("kill before terminate") }
                case .scheduleTick(let at):
                    if at <= driver.now { problems.append("tick scheduled in the past") }
                case .emit(let reason, _):
                    emitted.insert(reason)
                case .probe:
                    if world.probing { problems.append("a second probe while one runs") }
                    if world.pid == nil || world.terminated { problems.append("a probe without a running instance") }
                    world.probing = true
                case .cancelProbe:
                    // The probe runs on until its (stale) result comes back: one at a time still.
                    if !world.probing { problems.append("a cancel without a probe running") }
                case .availability(let availability):
                    let down = availability != .up
                    if down == world.down { problems.append("availability repeated (down \(down))") }
                    if down, !world.wanted { problems.append("down while not wanted") }
                    if down, !actions.reasons.contains(.signerDown) { problems.append("down without signerDown") }
                    world.down = down
                }
            }
            if actions.count(of: .spawn) > 1 { problems.append("several spawns at once") }
            if Set(actions.ticks).count != actions.ticks.count { problems.append("the same tick asked for twice") }
            if driver.machine.isDown != world.down { problems.append("isDown disagrees with the availability actions") }
            if !world.wanted, world.down { problems.append("down while not wanted") }

            let status = driver.status
            seen.insert(status.state)
            if driver.machine.wanted != world.wanted { problems.append("wanted disagrees") }
            if status.pid.map(Int32.init) != world.pid {
                problems.append("status pid \(String(describing: status.pid)) but process \(String(describing: world.pid))")
            }
            if (status.state == .running || status.state == .stopping) && world.pid == nil {
                problems.append("state \(status.state) but no process")
            }
            if world.pid != nil, ![.running, .stopping, .starting].contains(status.state) {
                problems.append("state \(status.state) but process \(String(describing: world.pid))")
            }
            if (status.state == .starting && status.pid == nil) != world.spawnPending {
                problems.append("state \(status.state) but spawn pending \(world.spawnPending)")
            }
            if status.ready != (status.state == .running) { problems.append("ready \(status.ready) in state \(status.state)") }
            if !world.wanted, world.pid == nil, !world.spawnPending, status.state != .stopped, status.state != .failed {
                problems.append("not wanted and nothing running, but \(status.state)")
            }
            if world.wanted, status.state == .stopped { problems.append("wanted but stopped") }
            if !world.wanted, world.pid != nil, !world.terminated { problems.append("unwanted process not being stopped") }
            if !sessionStarted, status.restarts < world.restartsInSession {
                problems.append("restarts went down from \(world.restartsInSession) to \(status.restarts) within a session")
            }
            world.restartsInSession = status.restarts

            if !problems.isEmpty {
                found.append("seed \(seed) step \(step): \(input) → \(actions): \(problems.joined(separator: "; "))")
            }
        }
        return found
    }

    static let seeds: [UInt64] = [1, 2, 3, 42, 0xC0FFEE, 0xDEAD_BEEF]

    static func configuration(seed: UInt64) -> SignerMachine.Configuration {
        // Half the runs with liveness checks, half with a health command, some of type
        // notify, and a small crash-loop limit so `failed` is reached.
        var configuration = D.configuration(
            crashLoopLimit: 3 + Int(seed % 3),
            stopTimeout: .seconds(2),
            liveness: seed % 2 == 0 ? .seconds(10) : nil)
        configuration.stableAfter = .seconds(20)
        configuration.startGrace = .seconds(10)
        if seed % 3 == 0 { configuration.type = .notify }
        if seed % 2 == 1 || seed == 42 {
            var health = SignerMachine.HealthConfiguration()
            health.retries = seed == 42 || seed == 3 ? 1 : 2
            health.restartOnUnhealthy = seed != 42
            configuration.health = health
        }
        return configuration
    }

    @Test(arguments: seeds)
    func invariantsHoldAfterEveryInput(seed: UInt64) {
        var seen = Set<SignerStatus.State>()
        var emitted = Set<EventReason>()
        let found = Self.violations(
            seed: seed, count: 5000, configuration: Self.configuration(seed: seed),
            seen: &seen, emitted: &emitted)
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test func theRandomRunsReachEveryStateAndEvent() {
        // Guards the property test against a generator that never reaches the interesting cases.
        var seen = Set<SignerStatus.State>()
        var emitted = Set<EventReason>()
        for seed in Self.seeds {
            _ = Self.violations(
                seed: seed, count: 5000, configuration: Self.configuration(seed: seed),
                seen: &seen, emitted: &emitted)
        }
        #expect(seen == Set(SignerStatus.State.allCases))
        #expect(
            emitted == [
                .signerStarted, .signerExited, .signerRestarting, .signerFailed,
                .signerStopped, .signerHung, .signerReady, .signerStatus, .signerStopping,
                .signerUnhealthy, .signerHealthy, .signerDown, .signerRestored,
            ])
    }
}
