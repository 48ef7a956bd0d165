import Foundation
import Testing
import SoundscapeCore

@Suite struct SignerMachineTests {
    typealias D = SignerDriver

    static let crashed = "exited with status 1"

    // MARK: Starting

    @Test func unwantedSignerDoesNothing() {
        var driver = D()
        let idle = SignerStatus(state: .stopped, pid: nil, restarts: 0, lastExit: nil)
        #expect(driver.status == idle)
        #expect(driver.send(.session(false)) == [])
        #expect(driver.send(.tick, after: .seconds(100)) == [])
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.status == idle)
        #expect(!driver.machine.wanted)
    }

    @Test func wantedSignerIsSpawnedAndReportsItsPid() {
        var driver = D()
        #expect(driver.send(.session(true)) == [.spawn])
        #expect(driver.machine.wanted)
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: nil))
        // Asking again while it starts spawns nothing more.
        #expect(driver.send(.session(true)) == [])
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
        #expect(driver.send(.session(false)) == [.terminate(.term), .scheduleTick(at: stopAt + .seconds(5))])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 7, restarts: 0, lastExit: nil))
        // Repeating the wish does not send a second SIGTERM.
        #expect(driver.send(.session(false)) == [])
        #expect(driver.send(.tick, after: .seconds(1)) == [])

        #expect(
            driver.send(.exited(.signaled(15)), after: .milliseconds(500))
                == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)")])
        #expect(
            driver.status
                == SignerStatus(
                    state: .stopped, pid: nil, restarts: 0,
                    lastExit: "killed by signal 15 (SIGTERM)", lastExitSignal: "SIGTERM"))
        // The kill deadline passing later is harmless.
        #expect(driver.send(.tick, at: stopAt + .seconds(5)) == [])
        #expect(driver.status.state == .stopped)
    }

    @Test func stopEscalatesToKillAtTheDeadlineOnlyOnce() {
        var driver = D.running(pid: 7, D.configuration(stopTimeout: .seconds(2)))
        let stopAt = driver.now
        #expect(driver.send(.session(false)) == [.terminate(.term), .scheduleTick(at: stopAt + .seconds(2))])
        #expect(driver.send(.tick, at: stopAt + .milliseconds(1999)) == [])
        #expect(driver.send(.tick, at: stopAt + .seconds(2)) == [.kill])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 7, restarts: 0, lastExit: nil))
        #expect(driver.send(.tick, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(60)) == [])

        #expect(
            driver.send(.exited(.signaled(9)), after: .milliseconds(5))
                == [.emit(.signerStopped, message: "killed by signal 9 (SIGKILL)")])
        #expect(driver.status.state == .stopped)
        #expect(driver.status.pid == nil)
    }

    @Test func stopWhileStartingTerminatesOnceItIsUp() {
        var driver = D()
        driver.send(.session(true))
        #expect(driver.send(.session(false), after: .milliseconds(1)) == [])
        #expect(driver.status.state == .starting)
        let upAt = driver.now + .milliseconds(5)
        #expect(
            driver.send(.spawned(pid: 9), at: upAt) == [
                .emit(.signerStarted, message: "pid 9"), .terminate(.term), .scheduleTick(at: upAt + .seconds(5)),
            ])
        #expect(driver.status.state == .stopping)
        #expect(
            driver.send(.exited(.exited(code: 0)), after: .milliseconds(5))
                == [.emit(.signerStopped, message: "exited with status 0")])
        #expect(driver.status.state == .stopped)
    }

    @Test func spawnFailureAfterStopIsReportedButNotRetried() {
        var driver = D()
        driver.send(.session(true))
        driver.send(.session(false))
        #expect(
            driver.send(.spawnFailed("No such file or directory"))
                == [.emit(.signerExited, message: "could not start: No such file or directory")])
        #expect(
            driver.status
                == SignerStatus(
                    state: .stopped, pid: nil, restarts: 0,
                    lastExit: "could not start: No such file or directory"))
        #expect(driver.send(.tick, after: .seconds(100)) == [])
    }

    @Test func playDuringStopSpawnsAgainAfterTheExit() {
        var driver = D.running(pid: 7)
        driver.send(.session(false))
        #expect(driver.send(.session(true), after: .milliseconds(100)) == [])
        #expect(driver.status.state == .stopping)
        #expect(driver.status.pid == 7)

        let actions = driver.send(.exited(.signaled(15)), after: .milliseconds(100))
        #expect(actions == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)"), .spawn])
        #expect(
            driver.status
                == SignerStatus(
                    state: .starting, pid: nil, restarts: 0,
                    lastExit: "killed by signal 15 (SIGTERM)", lastExitSignal: "SIGTERM"))
        #expect(driver.send(.spawned(pid: 8)) == [.emit(.signerStarted, message: "pid 8")])
        #expect(driver.status.pid == 8)
    }

    @Test func stopDuringBackoffWaitGoesIdleAndCancelsTheRestart() throws {
        var driver = D.running()
        let actions = driver.send(.exited(.exited(code: 2)), after: .seconds(1))
        let restartAt = try #require(actions.ticks.first)
        #expect(driver.status.state == .restarting)

        #expect(driver.send(.session(false), after: .milliseconds(200)) == [.emit(.signerStopped, message: nil)])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 1, lastExit: "exited with status 2"))
        // The restart tick that was already scheduled must not spawn anything.
        #expect(driver.send(.tick, at: restartAt) == [])
        #expect(driver.send(.tick, after: .seconds(100)) == [])
        #expect(driver.status.state == .stopped)
    }

    // MARK: Liveness

    @Test func silentSignerIsTreatedAsHungAndRestarted() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.session(true))
        let upAt = driver.now + .milliseconds(50)
        #expect(
            driver.send(.spawned(pid: 50), at: upAt)
                == [.emit(.signerStarted, message: "pid 50"), .scheduleTick(at: upAt + .seconds(10))])

        // Heartbeats push the deadline; the tick at the old one asks for the new one.
        #expect(driver.send(.heartbeat, at: upAt + .seconds(4)) == [])
        #expect(driver.send(.tick, at: upAt + .seconds(10)) == [.scheduleTick(at: upAt + .seconds(14))])
        #expect(driver.send(.tick, at: upAt + .milliseconds(13_999)) == [])
        #expect(driver.status.state == .running)

        let hungAt = upAt + .seconds(14)
        #expect(
            driver.send(.tick, at: hungAt) == [
                .emit(.signerHung, message: "no heartbeat for 10 s"),
                .terminate(.term), .scheduleTick(at: hungAt + .seconds(5)),
            ])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 50, restarts: 0, lastExit: nil))
        // Heartbeats from a process being stopped change nothing; neither does an early tick.
        #expect(driver.send(.heartbeat, after: .seconds(1)) == [])
        #expect(driver.send(.tick) == [])

        // Its exit counts as a failure: restart after the backoff.
        let exitAt = hungAt + .seconds(2)
        #expect(
            driver.send(.exited(.signaled(15)), at: exitAt) == [
                .emit(.signerExited, message: "killed by signal 15 (SIGTERM)"),
                .emit(.signerRestarting, message: "restarting in 1 s"),
                .scheduleTick(at: exitAt + .seconds(1)),
            ])
        #expect(
            driver.status
                == SignerStatus(
                    state: .restarting, pid: nil, restarts: 1,
                    lastExit: "killed by signal 15 (SIGTERM)", lastExitSignal: "SIGTERM"))
        #expect(driver.send(.tick, at: exitAt + .seconds(1)) == [.spawn])
    }

    @Test func hungSignerThatIgnoresSIGTERMIsKilled() {
        var driver = D(D.configuration(stopTimeout: .seconds(3), liveness: .seconds(10)))
        driver.send(.session(true))
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
        driver.send(.session(true))
        driver.send(.spawned(pid: 50))
        // A late tick (the daemon was busy) reports the real silence.
        let actions = driver.send(.tick, after: .milliseconds(12_345))
        #expect(actions.first == .emit(.signerHung, message: "no heartbeat for 12.3 s"))
    }

    @Test func stopWhileHungIsAPlainStop() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.session(true))
        driver.send(.spawned(pid: 50))
        driver.send(.tick, after: .seconds(10))
        #expect(driver.status.state == .stopping)
        // Already terminating: no second SIGTERM.
        #expect(driver.send(.session(false)) == [])
        #expect(
            driver.send(.exited(.signaled(15)), after: .seconds(1))
                == [.emit(.signerStopped, message: "killed by signal 15 (SIGTERM)")])
        #expect(
            driver.status
                == SignerStatus(
                    state: .stopped, pid: nil, restarts: 0,
                    lastExit: "killed by signal 15 (SIGTERM)", lastExitSignal: "SIGTERM"))
    }

    @Test func withoutALivenessTimeoutThereAreNoLivenessTicks() {
        var driver = D(D.configuration(liveness: nil))
        driver.send(.session(true))
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
        #expect(
            SignerStatus.State.allCases.map(\.rawValue)
                == ["stopped", "starting", "running", "stopping", "restarting", "failed"])
    }
}
