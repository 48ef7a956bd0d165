import Foundation
import Testing
import SoundscapeCore

/// Restarts after an exit: the delay and its back-off, the crash loop, and a reset after failing.
extension SignerMachineTests {
    // MARK: Restarting

    @Test func unwantedExitRestartsAfterOneSecond() {
        var driver = D.running(pid: 100)
        let exitAt = driver.now + .seconds(2)
        #expect(
            driver.send(.exited(.exited(code: 3)), at: exitAt) == [
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

    /// Issue 37: four quick health flaps reached the old default limit of 5, and the
    /// keep-alive gave up while its endpoint recovered. By default it never gives up.
    @Test func byDefaultItNeverGivesUpAndWaitsAtMostTheMaximumDelay() throws {
        var configuration = SignerMachine.Configuration()
        configuration.startGrace = D.lifecycleGrace
        #expect(configuration.crashLoopLimit == 0)
        var driver = D(configuration)
        driver.send(.session(true))
        for index in 0..<50 {
            let actions = driver.spawnAndCrash(pid: Int32(300 + index))
            #expect(!actions.contains { if case .emit(.signerFailed, _) = $0 { true } else { false } }, "\(actions)")
            let restartAt = actions.compactMap { action -> ContinuousClock.Instant? in
                if case .scheduleTick(let at) = action { at } else { nil }
            }.max()
            let at = try #require(restartAt, "crash \(index): no restart scheduled: \(actions)")
            #expect(at - driver.now <= .seconds(60), "crash \(index): \(actions)")
            #expect(driver.send(.tick, at: at) == [.spawn], "crash \(index)")
        }
        #expect(driver.status.state == .starting)
    }

    @Test func quickCrashesBackOffExponentiallyUpToTheCap() {
        var driver = D(D.configuration(crashLoopLimit: 100))
        driver.send(.session(true))
        let expected: [Int64] = [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
        for (index, seconds) in expected.enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(200 + index))
            let exitAt = driver.now
            #expect(
                actions == [
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
        driver.send(.session(true))
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
        driver.send(.session(true))
        // Four quick failures: one short of giving up, the backoff at 8 s.
        for (index, seconds) in [1, 2, 4, 8].enumerated() {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            #expect(actions.ticks == [driver.now + .seconds(seconds)])
            driver.send(.tick, after: .seconds(seconds))
        }
        // This one stays up exactly `stableAfter`.
        let actions = driver.spawnAndCrash(pid: 10, uptime: .seconds(30))
        #expect(
            actions == [
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
        driver.send(.session(true))
        let first = driver.spawnAndCrash(pid: 1)
        driver.send(.tick, at: try #require(first.ticks.first))
        let second = driver.spawnAndCrash(pid: 2, uptime: .seconds(30) - .milliseconds(1))
        #expect(second.ticks == [driver.now + .seconds(2)])
        #expect(second.contains(.emit(.signerRestarting, message: "restarting in 2 s")))
    }

    @Test func crashLoopGivesUpUntilTheNextSession() throws {
        var driver = D(D.configuration(crashLoopLimit: 5))
        driver.send(.session(true))
        for index in 0..<4 {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            #expect(actions.reasons == [.signerExited, .signerRestarting])
            driver.send(.tick, at: try #require(actions.ticks.first))
        }
        let fifth = driver.spawnAndCrash(pid: 5)
        #expect(
            fifth == [
                .emit(.signerExited, message: Self.crashed),
                .emit(
                    .signerFailed,
                    message: "5 failures in a row (the last: exited with status 1): "
                        + "signer-crash-limit reached; not restarting until the next play"),
            ])
        #expect(driver.status == SignerStatus(state: .failed, pid: nil, restarts: 4, lastExit: Self.crashed))

        // Nothing brings it back by itself.
        #expect(driver.send(.tick, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(3600)) == [])
        #expect(driver.send(.heartbeat) == [])
        #expect(driver.send(.session(true)) == [])
        #expect(driver.status.state == .failed)

        // Stop, then play: a new session with fresh counters.
        #expect(driver.send(.session(false)) == [])
        #expect(driver.status == SignerStatus(state: .stopped, pid: nil, restarts: 4, lastExit: Self.crashed))
        #expect(driver.send(.session(true)) == [.spawn])
        #expect(driver.status == SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: Self.crashed))
        // Backoff and crash-loop count start afresh too.
        let again = driver.spawnAndCrash(pid: 6)
        #expect(again.ticks == [driver.now + .seconds(1)])
        #expect(driver.status.restarts == 1)
    }

    @Test func resetFailureGivesAFailedSignerAFreshStart() {
        var driver = D(D.configuration(crashLoopLimit: 3))
        driver.send(.session(true))
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
        driver.send(.session(true))
        let message = "could not start: No such file or directory"
        for (index, seconds) in [1, 2, 4].enumerated() {
            let actions = driver.send(.spawnFailed("No such file or directory"), after: .milliseconds(3))
            #expect(
                actions == [
                    .emit(.signerExited, message: message),
                    .emit(.signerRestarting, message: "restarting in \(seconds) s"),
                    .scheduleTick(at: driver.now + .seconds(seconds)),
                ])
            #expect(driver.status == SignerStatus(state: .restarting, pid: nil, restarts: index + 1, lastExit: message))
            #expect(driver.send(.tick, after: .seconds(seconds)) == [.spawn])
        }
        #expect(
            driver.send(.spawnFailed("No such file or directory")) == [
                .emit(.signerExited, message: message),
                .emit(
                    .signerFailed,
                    message: "4 failures in a row (the last: could not start: No such file or directory): "
                        + "signer-crash-limit reached; not restarting until the next play"),
            ])
        #expect(driver.status.state == .failed)
    }
}

/// A death of a known cause at start is named, with what to change.
@Suite struct SignerCrashTests {
    typealias D = SignerDriver

    @Test func aTrapAtStartUnderWXIsNamedWithWhatToChange() {
        var configuration = D.configuration()
        configuration.writeExecuteDenied = true
        var driver = D.running(pid: 5, configuration)
        let exited = driver.send(.exited(.signaled(5)), after: .milliseconds(300))
        let message =
            "killed by signal 5 (SIGTRAP) 0.3 s after it started: a JIT runtime (Node.js, Bun, Deno, a JVM) dies like "
            + "this without writable-and-executable memory: set signer-memory-deny-write-execute = no (and have no "
            + "MemoryDenyWriteExecute=yes in a drop-in of soundscaped.service)"
        #expect(exited.first == .emit(.signerExited, message: message))
        #expect(driver.status.lastExit == message)
        #expect(driver.status.lastExitSignal == "SIGTRAP")
    }

    @Test func withoutWXOrLaterTheSignalIsNamedWithoutAdvice() {
        var plain = D.running(pid: 5)
        #expect(plain.send(.exited(.signaled(5)), after: .milliseconds(300)).first == .emit(.signerExited, message: "killed by signal 5 (SIGTRAP)"))
        var configuration = D.configuration()
        configuration.writeExecuteDenied = true
        var late = D.running(pid: 5, configuration)
        #expect(late.send(.exited(.signaled(11)), after: .seconds(60)).first == .emit(.signerExited, message: "killed by signal 11 (SIGSEGV)"))
        #expect(late.status.lastExitSignal == "SIGSEGV")
    }

    @Test func aBlockedSystemCallIsNamedWhateverTheWX() {
        var driver = D.running(pid: 5)
        let exited = driver.send(.exited(.signaled(31)), after: .seconds(1))
        #expect(
            exited.first
                == .emit(
                    .signerExited,
                    message: "killed by signal 31 (SIGSYS) 1 s after it started: it made a system call its sandbox forbids "
                        + "(SIGSYS): see the SystemCallFilter= of soundscaped.service and docs/systemd.md"))
    }

    @Test func anExitStatusHasNoSignal() {
        var driver = D.running(pid: 5)
        driver.send(.exited(.signaled(9)), after: .seconds(1))
        #expect(driver.status.lastExitSignal == "SIGKILL")
        driver.send(.tick, after: .seconds(1))
        driver.send(.spawned(pid: 6))
        driver.send(.exited(.exited(code: 3)), after: .seconds(1))
        #expect(driver.status.lastExitSignal == nil)
        #expect(driver.status.lastExit == "exited with status 3")
    }
}
