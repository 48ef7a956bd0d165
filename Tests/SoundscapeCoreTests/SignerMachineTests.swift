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

    /// The lifecycle suites' grace: long, and unlike any lifecycle deadline, so the
    /// verdict's tick is told apart by its deadline alone.
    static let lifecycleGrace: Duration = .seconds(7777)

    init(_ configuration: SignerMachine.Configuration = SignerDriver.configuration(),
         origin: ContinuousClock.Instant = ContinuousClock.now) {
        machine = SignerMachine(configuration: configuration)
        self.origin = origin
        now = origin
    }

    /// Advances the fake clock by `elapsed`, then feeds `input`.
    @discardableResult
    mutating func send(_ input: SignerMachine.Input, after elapsed: Duration = .zero) -> [Action] {
        now = now + elapsed
        return shown(machine.handle(input, now: now))
    }

    /// Moves the fake clock to `instant` (never backwards), then feeds `input`.
    @discardableResult
    mutating func send(_ input: SignerMachine.Input, at instant: ContinuousClock.Instant) -> [Action] {
        precondition(instant >= now, "the fake clock only moves forwards")
        now = instant
        return shown(machine.handle(input, now: now))
    }

    private func shown(_ actions: [Action]) -> [Action] {
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

    static func configuration(crashLoopLimit: Int = 5, stopTimeout: Duration = .seconds(5),
                              liveness: Duration? = nil) -> SignerMachine.Configuration {
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
        precondition(driver.send(.setWanted(true)) == [.spawn])
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

@Suite struct SignerMachineTests {
    typealias D = SignerDriver

    static let crashed = "exited with status 1"

    // MARK: Starting

    @Test func unwantedSignerDoesNothing() {
        var driver = D()
        let idle = SignerStatus(state: .stopped, pid: nil, restarts: 0, lastExit: nil)
        #expect(driver.status == idle)
        #expect(driver.send(.setWanted(false)) == [])
        #expect(driver.send(.tick, after: .seconds(100)) == [])
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.status == idle)
        #expect(!driver.machine.wanted)
    }

    @Test func wantedSignerIsSpawnedAndReportsItsPid() {
        var driver = D()
        #expect(driver.send(.setWanted(true)) == [.spawn])
        #expect(driver.machine.wanted)
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: nil))
        // Asking again while it starts spawns nothing more.
        #expect(driver.send(.setWanted(true)) == [])
        #expect(driver.send(.tick, after: .seconds(10)) == [])

        #expect(driver.send(.spawned(pid: 4242), after: .milliseconds(20)) == [.emit(.signerStarted, message: "pid 4242")])
        #expect(driver.status == SignerStatus(state: .running, pid: 4242, restarts: 0, lastExit: nil))
        // Without a liveness timeout, ticks and heartbeats change nothing.
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(3600)) == [])
        #expect(driver.status.state == .running)
    }

    // MARK: Stopping

    @Test func stopTerminatesAndReportsStoppedWhenItExits() {
        var driver = D.running(pid: 7)
        let stopAt = driver.now
        #expect(driver.send(.setWanted(false)) == [.terminate(.term), .scheduleTick(at: stopAt + .seconds(5))])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 7, restarts: 0, lastExit: nil))
        // Repeating the wish does not send a second SIGTERM.
        #expect(driver.send(.setWanted(false)) == [])
        #expect(driver.send(.tick, after: .seconds(1)) == [])

        #expect(driver.send(.exited(.signaled(15)), after: .milliseconds(500))
                == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)")])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 0,
                                              lastExit: "killed by signal 15 (SIGTERM)"))
        // The kill deadline passing later is harmless.
        #expect(driver.send(.tick, at: stopAt + .seconds(5)) == [])
        #expect(driver.status.state == .stopped)
    }

    @Test func stopEscalatesToKillAtTheDeadlineOnlyOnce() {
        var driver = D.running(pid: 7, D.configuration(stopTimeout: .seconds(2)))
        let stopAt = driver.now
        #expect(driver.send(.setWanted(false)) == [.terminate(.term), .scheduleTick(at: stopAt + .seconds(2))])
        #expect(driver.send(.tick, at: stopAt + .milliseconds(1999)) == [])
        #expect(driver.send(.tick, at: stopAt + .seconds(2)) == [.kill])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 7, restarts: 0, lastExit: nil))
        #expect(driver.send(.tick, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(60)) == [])

        #expect(driver.send(.exited(.signaled(9)), after: .milliseconds(5))
                == [.emit(.signerStopped, message: "killed by signal 9 (SIGKILL)")])
        #expect(driver.status.state == .stopped)
        #expect(driver.status.pid == nil)
    }

    @Test func stopWhileStartingTerminatesOnceItIsUp() {
        var driver = D()
        driver.send(.setWanted(true))
        #expect(driver.send(.setWanted(false), after: .milliseconds(1)) == [])
        #expect(driver.status.state == .starting)
        let upAt = driver.now + .milliseconds(5)
        #expect(driver.send(.spawned(pid: 9), at: upAt) == [
            .emit(.signerStarted, message: "pid 9"), .terminate(.term), .scheduleTick(at: upAt + .seconds(5)),
        ])
        #expect(driver.status.state == .stopping)
        #expect(driver.send(.exited(.exited(code: 0)), after: .milliseconds(5))
                == [.emit(.signerStopped, message: "exited with status 0")])
        #expect(driver.status.state == .stopped)
    }

    @Test func spawnFailureAfterStopIsReportedButNotRetried() {
        var driver = D()
        driver.send(.setWanted(true))
        driver.send(.setWanted(false))
        #expect(driver.send(.spawnFailed("No such file or directory"))
                == [.emit(.signerExited, message: "could not start: No such file or directory")])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 0,
                                              lastExit: "could not start: No such file or directory"))
        #expect(driver.send(.tick, after: .seconds(100)) == [])
    }

    @Test func playDuringStopSpawnsAgainAfterTheExit() {
        var driver = D.running(pid: 7)
        driver.send(.setWanted(false))
        #expect(driver.send(.setWanted(true), after: .milliseconds(100)) == [])
        #expect(driver.status.state == .stopping)
        #expect(driver.status.pid == 7)

        let actions = driver.send(.exited(.signaled(15)), after: .milliseconds(100))
        #expect(actions == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)"), .spawn])
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0,
                                              lastExit: "killed by signal 15 (SIGTERM)"))
        #expect(driver.send(.spawned(pid: 8)) == [.emit(.signerStarted, message: "pid 8")])
        #expect(driver.status.pid == 8)
    }

    @Test func stopDuringBackoffWaitGoesIdleAndCancelsTheRestart() throws {
        var driver = D.running()
        let actions = driver.send(.exited(.exited(code: 2)), after: .seconds(1))
        let restartAt = try #require(actions.ticks.first)
        #expect(driver.status.state == .restarting)

        #expect(driver.send(.setWanted(false), after: .milliseconds(200)) == [.emit(.signerStopped, message: nil)])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 1, lastExit: "exited with status 2"))
        // The restart tick that was already scheduled must not spawn anything.
        #expect(driver.send(.tick, at: restartAt) == [])
        #expect(driver.send(.tick, after: .seconds(100)) == [])
        #expect(driver.status.state == .stopped)
    }

    // MARK: Restarting

    @Test func unwantedExitRestartsAfterOneSecond() {
        var driver = D.running(pid: 100)
        let exitAt = driver.now + .seconds(2)
        #expect(driver.send(.exited(.exited(code: 3)), at: exitAt) == [
            .emit(.signerExited, message: "exited with status 3"),
            .emit(.signerRestarting, message: "restarting in 1 s"),
            .scheduleTick(at: exitAt + .seconds(1)),
        ])
        #expect(driver.status == SignerStatus(state: .restarting, pid: nil, restarts: 1, lastExit: "exited with status 3"))

        #expect(driver.send(.tick, at: exitAt + .milliseconds(999)) == [])
        #expect(driver.status.state == .restarting)
        #expect(driver.send(.heartbeat) == [])
        #expect(driver.send(.tick, at: exitAt + .seconds(1)) == [.spawn])
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 1, lastExit: "exited with status 3"))
        #expect(driver.send(.tick, after: .seconds(5)) == [])
        #expect(driver.send(.spawned(pid: 101)) == [.emit(.signerStarted, message: "pid 101")])
        #expect(driver.status == SignerStatus(state: .running, pid: 101, restarts: 1, lastExit: "exited with status 3"))
    }

    @Test func quickCrashesBackOffExponentiallyUpToTheCap() {
        var driver = D(D.configuration(crashLoopLimit: 100))
        driver.send(.setWanted(true))
        let expected: [Int64] = [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
        for (index, seconds) in expected.enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(200 + index))
            let exitAt = driver.now
            #expect(actions == [
                .emit(.signerExited, message: Self.crashed),
                .emit(.signerRestarting, message: "restarting in \(seconds) s"),
                .scheduleTick(at: exitAt + .seconds(seconds)),
            ], "crash \(index + 1)")
            #expect(driver.status.restarts == index + 1)
            #expect(driver.send(.tick, at: exitAt + .seconds(seconds) - .milliseconds(1)) == [], "crash \(index + 1)")
            #expect(driver.send(.tick, at: exitAt + .seconds(seconds)) == [.spawn], "crash \(index + 1)")
        }
    }

    @Test func customBackoffParametersAreUsed() throws {
        var configuration = D.configuration(crashLoopLimit: 100)
        configuration.backoffInitial = .milliseconds(250)
        configuration.backoffMaximum = .seconds(1)
        var driver = D(configuration)
        driver.send(.setWanted(true))
        var delays: [Duration] = []
        for index in 0..<5 {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            let at = try #require(actions.ticks.first)
            delays.append(at - driver.now)
            driver.send(.tick, at: at)
        }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(1), .seconds(1)])
    }

    @Test func stableInstanceResetsBackoffAndCrashLoopCount() {
        var driver = D(D.configuration(crashLoopLimit: 5))
        driver.send(.setWanted(true))
        // Four quick failures: one short of giving up, the backoff at 8 s.
        for (index, seconds) in [1, 2, 4, 8].enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            #expect(actions.ticks == [driver.now + .seconds(seconds)])
            driver.send(.tick, after: .seconds(seconds))
        }
        // This one stays up exactly `stableAfter`.
        let actions = driver.spawnAndCrash(pid: 10, uptime: .seconds(30))
        #expect(actions == [
            .emit(.signerExited, message: Self.crashed),
            .emit(.signerRestarting, message: "restarting in 1 s"),
            .scheduleTick(at: driver.now + .seconds(1)),
        ])
        // The restart count is per session, not per crash loop: it keeps counting.
        #expect(driver.status.restarts == 5)
        driver.send(.tick, after: .seconds(1))

        // The stable run counted as failure 1 of a new streak: three more quick ones still restart…
        for (index, seconds) in [2, 4, 8].enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(20 + index))
            #expect(actions.reasons == [.signerExited, .signerRestarting])
            #expect(actions.ticks == [driver.now + .seconds(seconds)])
            driver.send(.tick, after: .seconds(seconds))
        }
        #expect(driver.status.state == .starting)
        // …and the fourth makes five in a row.
        #expect(driver.spawnAndCrash(pid: 30).reasons == [.signerExited, .signerFailed])
        #expect(driver.status.state == .failed)
    }

    @Test func anInstanceJustShortOfStableStillBacksOff() throws {
        var driver = D(D.configuration(crashLoopLimit: 100))
        driver.send(.setWanted(true))
        let first = driver.spawnAndCrash(pid: 1)
        driver.send(.tick, at: try #require(first.ticks.first))
        let second = driver.spawnAndCrash(pid: 2, uptime: .seconds(30) - .milliseconds(1))
        #expect(second.ticks == [driver.now + .seconds(2)])
        #expect(second.contains(.emit(.signerRestarting, message: "restarting in 2 s")))
    }

    @Test func crashLoopGivesUpUntilTheNextSession() throws {
        var driver = D(D.configuration(crashLoopLimit: 5))
        driver.send(.setWanted(true))
        for index in 0..<4 {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            #expect(actions.reasons == [.signerExited, .signerRestarting])
            driver.send(.tick, at: try #require(actions.ticks.first))
        }
        let fifth = driver.spawnAndCrash(pid: 5)
        #expect(fifth == [
            .emit(.signerExited, message: Self.crashed),
            .emit(.signerFailed, message: "5 failures in a row; not restarting until the next play"),
        ])
        #expect(driver.status == SignerStatus(state: .failed, pid: nil, restarts: 4, lastExit: Self.crashed))

        // Nothing brings it back by itself.
        #expect(driver.send(.tick, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(3600)) == [])
        #expect(driver.send(.heartbeat) == [])
        #expect(driver.send(.setWanted(true)) == [])
        #expect(driver.status.state == .failed)

        // Stop, then play: a new session with fresh counters.
        #expect(driver.send(.setWanted(false)) == [])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 4, lastExit: Self.crashed))
        #expect(driver.send(.setWanted(true)) == [.spawn])
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: Self.crashed))
        // Backoff and crash-loop count start afresh too.
        let again = driver.spawnAndCrash(pid: 6)
        #expect(again.ticks == [driver.now + .seconds(1)])
        #expect(driver.status.restarts == 1)
    }

    @Test func resetFailureGivesAFailedSignerAFreshStart() {
        var driver = D(D.configuration(crashLoopLimit: 3))
        driver.send(.setWanted(true))
        for index in 0..<3 {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            if let at = actions.ticks.first { driver.send(.tick, at: at) }
        }
        #expect(driver.status.state == .failed)
        #expect(driver.status.restarts == 2)

        #expect(driver.send(.resetFailure, after: .seconds(5)) == [.spawn])
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: Self.crashed))
        // It takes a full crash loop again to give up, starting from a 1 s backoff.
        for (index, seconds) in [1, 2].enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(10 + index))
            #expect(actions.ticks == [driver.now + .seconds(seconds)])
            driver.send(.tick, after: .seconds(seconds))
        }
        #expect(driver.spawnAndCrash(pid: 12).reasons == [.signerExited, .signerFailed])
    }

    @Test func resetFailureWhileRunningSpawnsNothing() {
        var driver = D.running(pid: 3)
        #expect(driver.send(.resetFailure) == [])
        #expect(driver.status.state == .running)
        #expect(driver.status.pid == 3)
    }

    @Test func spawnFailureCountsAsAFailureAndBacksOff() {
        var driver = D(D.configuration(crashLoopLimit: 4))
        driver.send(.setWanted(true))
        let message = "could not start: No such file or directory"
        for (index, seconds) in [1, 2, 4].enumerated() {
            let actions = driver.send(.spawnFailed("No such file or directory"), after: .milliseconds(3))
            #expect(actions == [
                .emit(.signerExited, message: message),
                .emit(.signerRestarting, message: "restarting in \(seconds) s"),
                .scheduleTick(at: driver.now + .seconds(seconds)),
            ])
            #expect(driver.status == SignerStatus(state: .restarting, pid: nil, restarts: index + 1, lastExit: message))
            #expect(driver.send(.tick, after: .seconds(seconds)) == [.spawn])
        }
        #expect(driver.send(.spawnFailed("No such file or directory")) == [
            .emit(.signerExited, message: message),
            .emit(.signerFailed, message: "4 failures in a row; not restarting until the next play"),
        ])
        #expect(driver.status.state == .failed)
    }

    // MARK: Liveness

    @Test func silentSignerIsTreatedAsHungAndRestarted() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.setWanted(true))
        let upAt = driver.now + .milliseconds(50)
        #expect(driver.send(.spawned(pid: 50), at: upAt)
                == [.emit(.signerStarted, message: "pid 50"), .scheduleTick(at: upAt + .seconds(10))])

        // Heartbeats push the deadline; the tick at the old one asks for the new one.
        #expect(driver.send(.heartbeat, at: upAt + .seconds(4)) == [])
        #expect(driver.send(.tick, at: upAt + .seconds(10)) == [.scheduleTick(at: upAt + .seconds(14))])
        #expect(driver.send(.tick, at: upAt + .milliseconds(13_999)) == [])
        #expect(driver.status.state == .running)

        let hungAt = upAt + .seconds(14)
        #expect(driver.send(.tick, at: hungAt) == [
            .emit(.signerHung, message: "no heartbeat for 10 s"),
            .terminate(.term), .scheduleTick(at: hungAt + .seconds(5)),
        ])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 50, restarts: 0, lastExit: nil))
        // Heartbeats from a process being stopped change nothing; neither does an early tick.
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.send(.tick) == [])

        // Its exit counts as a failure: restart after the backoff.
        let exitAt = hungAt + .seconds(2)
        #expect(driver.send(.exited(.signaled(15)), at: exitAt) == [
            .emit(.signerExited, message: "killed by signal 15 (SIGTERM)"),
            .emit(.signerRestarting, message: "restarting in 1 s"),
            .scheduleTick(at: exitAt + .seconds(1)),
        ])
        #expect(driver.status == SignerStatus(state: .restarting, pid: nil, restarts: 1,
                                              lastExit: "killed by signal 15 (SIGTERM)"))
        #expect(driver.send(.tick, at: exitAt + .seconds(1)) == [.spawn])
    }

    @Test func hungSignerThatIgnoresSIGTERMIsKilled() {
        var driver = D(D.configuration(stopTimeout: .seconds(3), liveness: .seconds(10)))
        driver.send(.setWanted(true))
        driver.send(.spawned(pid: 50))
        let hungAt = driver.now + .seconds(10)
        #expect(driver.send(.tick, at: hungAt).contains(.terminate(.term)))
        #expect(driver.send(.tick, at: hungAt + .seconds(3)) == [.kill])
        #expect(driver.send(.tick, after: .seconds(3)) == [])
        let actions = driver.send(.exited(.signaled(9)), after: .milliseconds(1))
        #expect(actions.reasons == [.signerExited, .signerRestarting])
    }

    @Test func hungMessageShowsTenthsOfASecond() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.setWanted(true))
        driver.send(.spawned(pid: 50))
        // A late tick (the daemon was busy) reports the real silence.
        let actions = driver.send(.tick, after: .milliseconds(12_345))
        #expect(actions.first == .emit(.signerHung, message: "no heartbeat for 12.3 s"))
    }

    @Test func stopWhileHungIsAPlainStop() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.setWanted(true))
        driver.send(.spawned(pid: 50))
        driver.send(.tick, after: .seconds(10))
        #expect(driver.status.state == .stopping)
        // Already terminating: no second SIGTERM.
        #expect(driver.send(.setWanted(false)) == [])
        #expect(driver.send(.exited(.signaled(15)), after: .seconds(1))
                == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)")])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 0,
                                              lastExit: "killed by signal 15 (SIGTERM)"))
    }

    @Test func withoutALivenessTimeoutThereAreNoLivenessTicks() {
        var driver = D(D.configuration(liveness: nil))
        driver.send(.setWanted(true))
        #expect(driver.send(.spawned(pid: 5)) == [.emit(.signerStarted, message: "pid 5")])
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(86_400)) == [])
        #expect(driver.status.state == .running)
    }

    // MARK: Exit reasons and status

    @Test(arguments: [
        (ExitReason.exited(code: 0), "exited with status 0"),
        (.exited(code: 3), "exited with status 3"),
        (.exited(code: 255), "exited with status 255"),
        (.signaled(9), "killed by signal 9 (SIGKILL)"),
        (.signaled(15), "killed by signal 15 (SIGTERM)"),
        (.signaled(11), "killed by signal 11 (SIGSEGV)"),
        (.signaled(6), "killed by signal 6 (SIGABRT)"),
        (.signaled(1), "killed by signal 1 (SIGHUP)"),
        (.signaled(42), "killed by signal 42"),
        (.signaled(0), "killed by signal 0"),
    ])
    func exitReasonDescriptions(reason: ExitReason, text: String) {
        #expect(reason.description == text)
        #expect("\(reason)" == text)
    }

    @Test func signerStatusWritesExplicitNulls() throws {
        let idle = SignerStatus(state: .stopped, pid: nil, restarts: 0, lastExit: nil)
        let data = try JSONEncoder().encode(idle)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(json.keys) == ["state", "pid", "restarts", "lastExit", "health", "ready", "status"])
        #expect(json["pid"] is NSNull)
        #expect(json["lastExit"] is NSNull)
        #expect(json["status"] is NSNull)
        #expect(json["health"] as? String == "unknown")
        #expect(json["ready"] as? Bool == false)
        #expect(json["state"] as? String == "stopped")
        #expect(json["restarts"] as? Int == 0)
        #expect(try JSONDecoder().decode(SignerStatus.self, from: data) == idle)

        let running = SignerStatus(state: .running, pid: 4242, restarts: 3, lastExit: "killed by signal 9 (SIGKILL)")
        let runningData = try JSONEncoder().encode(running)
        let runningJSON = try #require(try JSONSerialization.jsonObject(with: runningData) as? [String: Any])
        #expect(runningJSON["pid"] as? Int == 4242)
        #expect(runningJSON["lastExit"] as? String == "killed by signal 9 (SIGKILL)")
        #expect(try JSONDecoder().decode(SignerStatus.self, from: runningData) == running)
    }

    @Test func signerStatesHaveStableWireNames() {
        #expect(SignerStatus.State.allCases.map(\.rawValue)
                == ["stopped", "starting", "running", "stopping", "restarting", "failed"])
    }
}

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
            case 0, 1: return .setWanted(Bool.random(using: &generator))
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
    static func violations(seed: UInt64, count: Int, configuration: SignerMachine.Configuration,
                           seen: inout Set<SignerStatus.State>, emitted: inout Set<EventReason>) -> [String] {
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
            case .setWanted(let value):
                sessionStarted = value && !world.wanted
                world.wanted = value
            case .resetFailure:
                sessionStarted = true
            case .spawned(let pid):
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
                case .availability(let down, _):
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
            if status.pid.map(Int32.init) != world.pid { problems.append("status pid \(String(describing: status.pid)) but process \(String(describing: world.pid))") }
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

    static let seeds: [UInt64] = [1, 2, 3, 42, 0xC0FFEE, 0xDEADBEEF]

    static func configuration(seed: UInt64) -> SignerMachine.Configuration {
        // Half the runs with liveness checks, half with a health command, some of type
        // notify, and a small crash-loop limit so `failed` is reached.
        var configuration = D.configuration(crashLoopLimit: 3 + Int(seed % 3),
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
        let found = Self.violations(seed: seed, count: 5000, configuration: Self.configuration(seed: seed),
                                    seen: &seen, emitted: &emitted)
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test func theRandomRunsReachEveryStateAndEvent() {
        // Guards the property test against a generator that never reaches the interesting cases.
        var seen = Set<SignerStatus.State>()
        var emitted = Set<EventReason>()
        for seed in Self.seeds {
            _ = Self.violations(seed: seed, count: 5000, configuration: Self.configuration(seed: seed),
                                seen: &seen, emitted: &emitted)
        }
        #expect(seen == Set(SignerStatus.State.allCases))
        #expect(emitted == [.signerStarted, .signerExited, .signerRestarting, .signerFailed,
                            .signerStopped, .signerHung, .signerReady, .signerStatus, .signerStopping,
                            .signerUnhealthy, .signerHealthy, .signerDown, .signerRestored])
    }
}

