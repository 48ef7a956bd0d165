import Testing
import SoundscapeCore

/// `SignerMachine` and what the signer says on its notify socket, plus the settings
/// that make real signers run as they are: the stop signal and a crash limit of 0.
@Suite struct SignerNotifyTests {
    typealias D = SignerDriver

    static func notification(_ build: (inout SignerNotification) -> Void) -> SignerMachine.Input {
        var notification = SignerNotification()
        build(&notification)
        return .notify(notification)
    }

    static let ready = notification { $0.ready = true }
    static let stopping = notification { $0.stopping = true }
    static let ping = notification { $0.watchdog = true }
    static func status(_ text: String) -> SignerMachine.Input { notification { $0.status = text } }

    static func notifyType(liveness: Duration? = nil) -> SignerMachine.Configuration {
        var configuration = D.configuration(liveness: liveness)
        configuration.type = .notify
        return configuration
    }

    // MARK: READY=1

    @Test func aNotifySignerIsStartingUntilItSaysReady() {
        var driver = D(Self.notifyType())
        driver.send(.session(true))
        #expect(driver.send(.spawned(pid: 7)) == [.emit(.signerStarted, message: "pid 7")])
        #expect(driver.status == SignerStatus(state: .starting, pid: 7, restarts: 0, lastExit: nil, ready: false))
        #expect(driver.send(Self.ready, after: .seconds(2)) == [.emit(.signerReady, message: nil)])
        #expect(driver.status == SignerStatus(state: .running, pid: 7, restarts: 0, lastExit: nil, ready: true))
        // Saying it again changes nothing.
        #expect(driver.send(Self.ready, after: .seconds(1)) == [])
    }

    @Test func aSimpleSignerIsReadyOnceSpawnedAndNeedsNoReady() {
        var driver = D.running(pid: 7)
        #expect(driver.status.ready)
        #expect(driver.status.state == .running)
        #expect(driver.send(Self.ready) == [])
    }

    @Test func aNotifySignerThatNeverSaysReadyIsStoppedLikeAnyOther() {
        var driver = D(Self.notifyType())
        driver.send(.session(true))
        driver.send(.spawned(pid: 7))
        let stopAt = driver.now + .seconds(1)
        #expect(driver.send(.session(false), at: stopAt) == [.terminate(.term), .scheduleTick(at: stopAt + .seconds(5))])
        #expect(driver.status.state == .stopping)
    }

    // MARK: STOPPING=1 and ERRNO=

    @Test func stoppingMakesItNotReadyAndItsExitIsRestarted() {
        var driver = D.running(pid: 7)
        #expect(driver.send(Self.stopping) == [.emit(.signerStopping, message: nil)])
        #expect(driver.status == SignerStatus(state: .stopping, pid: 7, restarts: 0, lastExit: nil, ready: false))
        #expect(driver.send(Self.stopping) == [], "said once is enough")
        // Ready again (it changed its mind, as a reloading service does).
        #expect(driver.send(Self.ready) == [.emit(.signerReady, message: nil)])
        driver.send(Self.stopping)
        let actions = driver.send(.exited(.exited(code: 0)), after: .seconds(1))
        #expect(actions.reasons == [.signerExited, .signerRestarting])
    }

    @Test func errnoIsNamedInHowItEnded() {
        var driver = D.running(pid: 7)
        driver.send(
            Self.notification {
                $0.errno = 110; $0.status = "relay timed out"
            })
        let actions = driver.send(.exited(.exited(code: 1)), after: .seconds(1))
        #expect(actions.first == .emit(.signerExited, message: "exited with status 1 (it reported errno 110)"))
        #expect(driver.status.lastExit == "exited with status 1 (it reported errno 110)")
        // The next instance starts with a clean slate.
        driver.send(.tick, after: .seconds(1))
        driver.send(.spawned(pid: 8))
        driver.send(.exited(.exited(code: 1)), after: .seconds(1))
        #expect(driver.status.lastExit == "exited with status 1")
    }

    // MARK: STATUS=

    @Test func theStatusLineShowsAtOnceAndIsAnnouncedAtMostOnceASecond() {
        var driver = D.running(pid: 7)
        let start = driver.now
        #expect(driver.send(Self.status("connecting\n")) == [.emit(.signerStatus, message: "connecting")])
        #expect(driver.status.status == "connecting")
        // A second line within the second: shown at once, announced when the second is over.
        #expect(driver.send(Self.status("1/3 relays"), after: .milliseconds(100)) == [.scheduleTick(at: start + .seconds(1))])
        #expect(driver.status.status == "1/3 relays")
        #expect(driver.send(Self.status("2/3 relays"), after: .milliseconds(100)) == [])
        #expect(driver.send(Self.status("3/3 relays"), after: .milliseconds(100)) == [])
        #expect(driver.send(.tick, at: start + .seconds(1)) == [.emit(.signerStatus, message: "3/3 relays")])
        // The same line again is no news; an empty one keeps the line.
        #expect(driver.send(Self.status("3/3 relays"), after: .seconds(5)) == [])
        #expect(driver.send(Self.status(" \u{7} "), after: .seconds(5)) == [])
        #expect(driver.status.status == "3/3 relays")
    }

    @Test func aFloodOfStatusLinesAsksForOneTick() {
        var driver = D.running(pid: 7)
        driver.send(Self.status("0"))
        var ticks = 0
        var events = 0
        for index in 1...10_000 {
            let actions = driver.send(Self.status("\(index)"), after: .microseconds(10))
            ticks += actions.ticks.count
            events += actions.reasons.count
        }
        #expect(ticks == 1)
        #expect(events == 0)
        #expect(driver.status.status == "10000")
    }

    /// What an instance said is not said of the next: status shows only what is true now.
    @Test func theStatusLineEndsWithItsInstance() {
        var driver = D.running(pid: 7)
        driver.send(Self.status("3/3 relays"))
        driver.send(.exited(.signaled(9)), after: .seconds(2))
        #expect(driver.status.status == nil)
        #expect(driver.status.state == .restarting)
        driver.send(.tick, after: .seconds(1))
        driver.send(.spawned(pid: 8))
        #expect(driver.status.status == nil)
        // The next instance's own words are news again, even the same words.
        #expect(driver.send(Self.status("3/3 relays")) == [.emit(.signerStatus, message: "3/3 relays")])
    }

    @Test func statusFromAnInstanceBeingStoppedIsStillHeard() {
        var driver = D.running(pid: 7)
        driver.send(.session(false))
        #expect(driver.send(Self.status("flushing")) == [.emit(.signerStatus, message: "flushing")])
        #expect(driver.send(Self.ready) == [], "no readiness while being stopped")
        #expect(driver.status.state == .stopping)
    }

    @Test func notificationsWithNoInstanceAreIgnored() {
        var driver = D()
        #expect(driver.send(Self.ready) == [])
        #expect(driver.send(Self.status("x")) == [])
        #expect(driver.status.status == nil)
    }

    // MARK: WATCHDOG=

    @Test func watchdogPingsAreHeartbeats() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.session(true))
        let upAt = driver.now
        #expect(driver.send(.spawned(pid: 5)) == [.emit(.signerStarted, message: "pid 5"), .scheduleTick(at: upAt + .seconds(10))])
        // Pings move the deadline; the tick at the old one asks for the new.
        #expect(driver.send(Self.ping, at: upAt + .seconds(6)) == [])
        #expect(driver.send(.tick, at: upAt + .seconds(10)) == [.scheduleTick(at: upAt + .seconds(16))])
        #expect(driver.send(.heartbeat, at: upAt + .seconds(12)) == [], "the stdout heartbeat keeps working beside it")
        #expect(driver.send(.tick, at: upAt + .seconds(16)) == [.scheduleTick(at: upAt + .seconds(22))])
        let hungAt = upAt + .seconds(22)
        #expect(
            driver.send(.tick, at: hungAt) == [
                .emit(.signerHung, message: "no heartbeat for 10 s"), .terminate(.term), .scheduleTick(at: hungAt + .seconds(5)),
            ])
    }

    @Test func aFloodOfPingsAsksForNoTicks() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.session(true))
        driver.send(.spawned(pid: 5))
        for _ in 0..<10_000 {
            #expect(driver.send(Self.ping, after: .microseconds(100)) == [])
        }
    }

    @Test func watchdogTriggerIsAHangAtOnce() {
        var driver = D.running(pid: 5)
        let at = driver.now + .seconds(3)
        #expect(
            driver.send(Self.notification { $0.watchdogTrigger = true }, at: at) == [
                .emit(.signerHung, message: "it sent WATCHDOG=trigger"), .terminate(.term), .scheduleTick(at: at + .seconds(5)),
            ])
    }

    @Test func aResumeForgivesTheSilenceOfTheSleep() {
        var driver = D(D.configuration(liveness: .seconds(10)))
        driver.send(.session(true))
        let upAt = driver.now
        driver.send(.spawned(pid: 5))
        // An hour asleep; the daemon learns of it before the liveness tick runs.
        let wokeAt = upAt + .seconds(3605)
        #expect(driver.send(.resumed(slept: .seconds(3600)), at: wokeAt) == [])
        #expect(driver.send(.tick, at: wokeAt + .milliseconds(1)) == [.scheduleTick(at: wokeAt + .seconds(10))])
        #expect(driver.status.state == .running)
    }

    // MARK: The stop signal

    @Test(arguments: SignerStopSignal.allCases)
    func theConfiguredStopSignalIsSent(signal: SignerStopSignal) {
        var configuration = D.configuration(liveness: .seconds(10))
        configuration.stopSignal = signal
        var driver = D.running(pid: 5, configuration)
        #expect(driver.send(.session(false)).first == .terminate(signal))
        driver.send(.exited(.signaled(signal.number)))
        // A hang is stopped the same way.
        driver.send(.session(true))
        driver.send(.spawned(pid: 6))
        #expect(driver.send(.tick, after: .seconds(10)).contains(.terminate(signal)))
    }

    @Test func stopSignalNamesAndNumbers() {
        #expect(SignerStopSignal.allCases.map(\.number) == [15, 2, 1, 3, 10, 12])
        #expect(SignerStopSignal(parsing: "SIGINT") == .int)
        #expect(SignerStopSignal(parsing: "INT") == .int)
        #expect(SignerStopSignal(parsing: "sigquit") == .quit)
        #expect(SignerStopSignal(parsing: "usr2") == .usr2)
        for bad in ["SIGKILL", "KILL", "9", "", "SIG", "SIGTERM ", "TERMINATE"] {
            #expect(SignerStopSignal(parsing: bad) == nil, "\(bad)")
        }
    }

    // MARK: A crash limit of 0

    @Test func aCrashLimitOfZeroRestartsForeverWithTheBackoffCapped() throws {
        var configuration = D.configuration(crashLoopLimit: 0)
        configuration.backoffMaximum = .seconds(5)
        var driver = D(configuration)
        driver.send(.session(true))
        var delays: [Duration] = []
        for index in 0..<100 {
            let actions = driver.spawnAndCrash(pid: Int32(index + 1))
            #expect(actions.reasons == [.signerExited, .signerRestarting], "crash \(index + 1)")
            let at = try #require(actions.ticks.first)
            delays.append(at - driver.now)
            #expect(driver.send(.tick, at: at) == [.spawn])
        }
        #expect(Array(delays.prefix(5)) == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        #expect(delays.dropFirst(3).allSatisfy { $0 == .seconds(5) })
        #expect(driver.status.restarts == 100)
        #expect(driver.status.state == .starting)
    }
}
