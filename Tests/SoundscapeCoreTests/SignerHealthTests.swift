import Testing
import SoundscapeCore

/// `SignerMachine` with a health command: when probes run, what their results
/// mean, and what an unhealthy signer gets.
@Suite struct SignerHealthTests {
    typealias D = SignerDriver

    static func configuration(
        interval: Duration = .seconds(10), timeout: Duration = .seconds(5), retries: Int = 3,
        restart: Bool = true
    ) -> SignerMachine.Configuration {
        var configuration = D.configuration()
        var health = SignerMachine.HealthConfiguration()
        health.interval = interval
        health.timeout = timeout
        health.retries = retries
        health.restartOnUnhealthy = restart
        configuration.health = health
        return configuration
    }

    static let pass = SignerMachine.Input.probeFinished(.passed(output: "igloo: 3/3 relays"))
    static let fail = SignerMachine.Input.probeFinished(.failed("exited with status 1: not connected"))

    /// Wanted and spawned; its first probe is due one interval later.
    static func running(_ configuration: SignerMachine.Configuration = configuration()) -> (SignerDriver, ContinuousClock.Instant) {
        var driver = D(configuration)
        driver.send(.session(true))
        let upAt = driver.now
        let actions = driver.send(.spawned(pid: 10))
        precondition(actions == [.emit(.signerStarted, message: "pid 10"), .scheduleTick(at: upAt + .seconds(10))])
        return (driver, upAt)
    }

    /// Ticks to the next due probe and returns its actions.
    @discardableResult
    static func probe(_ driver: inout SignerDriver, after: Duration = .seconds(10)) -> [SignerMachine.Action] {
        driver.send(.tick, after: after)
    }

    /// A probe starting at `now`, and the tick for the next one, an interval after this start.
    static func started(at now: ContinuousClock.Instant, interval: Duration = .seconds(10)) -> [SignerMachine.Action] {
        [.probe(timeout: .seconds(5)), .scheduleTick(at: now + interval)]
    }

    @Test func aFreshInstanceIsProbedOneIntervalAfterItStartsThenEveryIntervalFromEachStart() {
        var (driver, upAt) = Self.running()
        #expect(driver.status.health == .unknown)
        #expect(driver.send(.tick, at: upAt + .milliseconds(9999)) == [])
        #expect(driver.send(.tick, at: upAt + .seconds(10)) == Self.started(at: upAt + .seconds(10)))
        // One that ends in time does not push the next back: it is due 10 s after this one started.
        #expect(driver.send(Self.pass, at: upAt + .seconds(12)) == [.emit(.signerStatus, message: "igloo: 3/3 relays")])
        #expect(driver.status.health == .healthy)
        #expect(driver.status.status == "igloo: 3/3 relays")
        #expect(driver.send(.tick, at: upAt + .seconds(20)) == Self.started(at: upAt + .seconds(20)))
        // While one runs, no second one, however late; the one due meanwhile starts as it ends.
        #expect(driver.send(.tick, at: upAt + .seconds(40)) == [])
        let endAt = upAt + .seconds(41)
        #expect(driver.send(Self.pass, at: endAt) == Self.started(at: endAt))
    }

    @Test func withoutAHealthCommandNothingIsProbed() {
        var driver = D.running(pid: 3)
        #expect(driver.send(.tick, after: .seconds(3600)) == [])
        #expect(driver.status.health == .unknown)
    }

    @Test func retriesFailuresInARowMakeItUnhealthyAndRestartIt() throws {
        var (driver, _) = Self.running()
        for count in 1...2 {
            let probed = Self.probe(&driver)
            #expect(probed == Self.started(at: driver.now))
            let actions = driver.send(Self.fail, after: .seconds(1))
            #expect(actions == [], "failure \(count): the next probe is already due, from this one's start")
            #expect(driver.status.health == .unknown)
        }
        let third = Self.probe(&driver)
        #expect(third == Self.started(at: driver.now))
        let failedAt = driver.now + .seconds(1)
        // No next probe for an instance about to be stopped.
        #expect(
            driver.send(Self.fail, at: failedAt) == [
                .emit(.signerUnhealthy, message: "3 failed health checks in a row: exited with status 1: not connected"),
                .terminate(.term), .scheduleTick(at: failedAt + .seconds(5)),
            ])
        #expect(driver.status.health == .unhealthy)
        #expect(driver.status.state == .stopping)
        // No probe for an instance being stopped.
        #expect(driver.send(.tick, at: failedAt + .seconds(10)).filter { $0 != .kill } == [])

        // It never proved healthy: a quick failure, restarted after the first delay.
        let exitAt = driver.now + .milliseconds(100)
        #expect(
            driver.send(.exited(.signaled(15)), at: exitAt) == [
                .emit(.signerExited, message: "killed by signal 15 (SIGTERM)"),
                .emit(.signerRestarting, message: "restarting in 1 s"), .scheduleTick(at: exitAt + .seconds(1)),
            ])
        #expect(driver.send(.tick, at: exitAt + .seconds(1)) == [.spawn])
        // The new instance stays unhealthy until a probe passes; that is news.
        driver.send(.spawned(pid: 11))
        #expect(driver.status.health == .unhealthy)
        let probed = Self.probe(&driver)
        #expect(probed == Self.started(at: driver.now))
        let actions = driver.send(Self.pass, after: .seconds(1))
        #expect(actions.reasons == [.signerStatus, .signerHealthy])
        #expect(driver.status.health == .healthy)
    }

    @Test func eachUnhealthyStreakIsReportedAndCountsTowardsTheCrashLimit() throws {
        var configuration = Self.configuration(retries: 1)
        configuration.crashLoopLimit = 3
        var (driver, _) = Self.running(configuration)
        for round in 1...3 {
            #expect(Self.probe(&driver).first == .probe(timeout: .seconds(5)), "round \(round)")
            let actions = driver.send(Self.fail, after: .seconds(1))
            #expect(actions.reasons == [.signerUnhealthy], "round \(round)")
            let exit = driver.send(.exited(.signaled(15)), after: .milliseconds(10))
            if round < 3 {
                #expect(exit.reasons == [.signerExited, .signerRestarting])
                driver.send(.tick, at: try #require(exit.ticks.first))
                driver.send(.spawned(pid: Int32(20 + round)))
            } else {
                // Up more than `stableAfter` each time, yet never healthy: quick failures all.
                #expect(exit.reasons == [.signerExited, .signerFailed])
            }
        }
    }

    @Test func anInstanceThatWasHealthyForLongRestartsAfterTheFirstDelay() throws {
        var configuration = Self.configuration(retries: 1)
        configuration.crashLoopLimit = 2
        var (driver, _) = Self.running(configuration)
        Self.probe(&driver)
        driver.send(Self.pass, after: .seconds(1))
        Self.probe(&driver, after: .seconds(60))
        driver.send(Self.fail, after: .seconds(1))
        let exit = driver.send(.exited(.signaled(15)), after: .milliseconds(10))
        #expect(exit.reasons == [.signerExited, .signerRestarting])
        #expect(exit.contains(.emit(.signerRestarting, message: "restarting in 1 s")))
    }

    @Test func withoutRestartOnUnhealthyItIsReportedOnceAndProbedOn() {
        var (driver, _) = Self.running(Self.configuration(retries: 2, restart: false))
        var reasons: [EventReason] = []
        for _ in 0..<6 {
            Self.probe(&driver)
            reasons += driver.send(Self.fail, after: .seconds(1)).reasons
        }
        #expect(reasons == [.signerUnhealthy])
        #expect(driver.status.state == .running)
        #expect(driver.status.health == .unhealthy)
        Self.probe(&driver)
        #expect(driver.send(Self.pass, after: .seconds(1)).reasons == [.signerStatus, .signerHealthy])
    }

    @Test func aPassResetsTheCount() {
        var (driver, _) = Self.running()
        for result in [Self.fail, Self.fail, Self.pass, Self.fail, Self.fail] {
            Self.probe(&driver)
            #expect(!driver.send(result, after: .seconds(1)).reasons.contains(.signerUnhealthy))
        }
        #expect(driver.status.state == .running)
    }

    @Test func aHealthyVerdictIsNotInheritedByTheNextInstance() throws {
        var (driver, _) = Self.running()
        Self.probe(&driver)
        driver.send(Self.pass, after: .seconds(1))
        #expect(driver.status.health == .healthy)
        let exit = driver.send(.exited(.exited(code: 1)), after: .seconds(1))
        driver.send(.tick, at: try #require(exit.ticks.first))
        driver.send(.spawned(pid: 11))
        #expect(driver.status.health == .unknown)
    }

    @Test func aProbeOfAnInstanceThatEndedIsDroppedAndTheNextOneWaitsForIt() throws {
        var (driver, _) = Self.running()
        #expect(Self.probe(&driver).first == .probe(timeout: .seconds(5)))
        // The instance crashes while its probe runs; the next one starts at once.
        let exit = driver.send(.exited(.exited(code: 1)), after: .seconds(1))
        let restartAt = try #require(exit.ticks.first)
        driver.send(.tick, at: restartAt)
        let newUpAt = driver.now
        driver.send(.spawned(pid: 11))
        // Its first probe falls due while the old one still runs (a long timeout): it waits…
        #expect(driver.send(.tick, at: newUpAt + .seconds(10)) == [])
        // …and starts when the old one's (stale, dropped) result comes.
        #expect(driver.send(Self.fail, at: newUpAt + .seconds(12)) == Self.started(at: newUpAt + .seconds(12)))
        #expect(driver.status.health == .unknown)
    }

    @Test func aResumeProbesAtOnce() {
        var (driver, upAt) = Self.running()
        let wokeAt = upAt + .seconds(4)
        #expect(driver.send(.resumed(slept: .seconds(3600)), at: wokeAt) == Self.started(at: wokeAt))
        // A second resume while it runs: another probe right after this one.
        #expect(driver.send(.resumed(slept: .seconds(60)), after: .seconds(1)) == [])
        let passedAt = wokeAt + .seconds(2)
        #expect(
            driver.send(Self.pass, at: passedAt)
                == Self.started(at: passedAt) + [.emit(.signerStatus, message: "igloo: 3/3 relays")])
    }

    @Test func aResumeWithoutAHealthCommandOrInstanceProbesNothing() {
        var plain = D.running(pid: 3)
        #expect(plain.send(.resumed(slept: .seconds(600))) == [])
        var idle = D(Self.configuration())
        #expect(idle.send(.resumed(slept: .seconds(600))) == [])
    }

    @Test func theSessionsEndForgetsTheVerdict() {
        var (driver, _) = Self.running(Self.configuration(retries: 1, restart: false))
        Self.probe(&driver)
        driver.send(Self.fail, after: .seconds(1))
        #expect(driver.status.health == .unhealthy)
        driver.send(.session(false))
        driver.send(.exited(.signaled(15)))
        #expect(driver.status.health == .unknown)
    }

    @Test func aReloadAddingAHealthCommandProbesTheRunningInstance() {
        var driver = D.running(pid: 3)
        let at = driver.now + .seconds(100)
        #expect(
            driver.machine.reconfigure(Self.configuration(interval: .seconds(4)), now: at)
                == [.scheduleTick(at: at + .seconds(4))])
        #expect(driver.send(.tick, at: at + .seconds(4)) == Self.started(at: at + .seconds(4), interval: .seconds(4)))
        // Removing it: the verdict goes, the running probe is cancelled and its result dropped.
        #expect(driver.machine.reconfigure(D.configuration(), now: at + .seconds(5)) == [.cancelProbe])
        #expect(driver.send(Self.fail, at: at + .seconds(6)) == [])
        #expect(driver.status.health == .unknown)
    }

    /// The one stale-fact rule (`SignerInstances`): a probe for an instance that ends is
    /// cancelled, its late result is dropped, and the next instance's first probe is its own.
    @Test func aProbeWhoseInstanceEndsIsCancelledAndItsResultIsStale() {
        var (driver, _) = Self.running(Self.configuration(retries: 1, restart: false))
        Self.probe(&driver)
        let exit = driver.send(.exited(.signaled(9)), after: .seconds(1))
        #expect(exit.contains(.cancelProbe), "\(exit)")
        // It started again (after the backoff), and then the cancelled probe's failure comes in.
        driver.send(.tick, after: .seconds(2))
        driver.send(.spawned(pid: 4), after: .milliseconds(10))
        #expect(driver.send(Self.fail, after: .milliseconds(10)).isEmpty)
        #expect(driver.status.health == .unknown, "a result about the instance before says nothing about this one")
        // The one probe at a time is over: the new instance is probed an interval after it started.
        #expect(Self.probe(&driver).first == .probe(timeout: .seconds(5)))
    }
}

/// Status says what is true now (issue: "UNHEALTHY (its health check fails)" sat above
/// "Signer says relays connected", kept from the last check that passed).
@Suite struct SignerStatusLineTruthTests {
    typealias D = SignerDriver

    @Test func aPassingChecksLineGoesWhenALaterCheckFails() {
        var (driver, _) = SignerHealthTests.running(SignerHealthTests.configuration(retries: 3))
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.pass, after: .milliseconds(50))
        #expect(driver.status.status == "igloo: 3/3 relays")
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.fail, after: .milliseconds(50))
        // One failed check: the line it no longer vouches for goes, and what failed takes its
        // place (issue 37: status was null beside a health still healthy).
        #expect(
            driver.status.status == "health check failed (1 of 3 before unhealthy): exited with status 1: not connected",
            "\(driver.status)")
        #expect(driver.status.health == .healthy, "health itself needs retries failures")
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.fail, after: .milliseconds(50))
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.fail, after: .milliseconds(50))
        #expect(driver.status.health == .unhealthy)
        #expect(driver.status.status == "health check fails: exited with status 1: not connected", "\(driver.status)")
    }

    @Test func noInstanceIsHealthyOnceItIsKilled() {
        var (driver, _) = SignerHealthTests.running(SignerHealthTests.configuration(retries: 3))
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.pass, after: .milliseconds(50))
        #expect(driver.status.health == .healthy)
        // kill -9: the event said "restarting healthy (killed by signal 9)".
        driver.send(.exited(.signaled(9)), after: .seconds(1))
        #expect(driver.status.state == .restarting)
        #expect(driver.status.health == .unknown, "\(driver.status)")
        #expect(driver.status.status == nil)
    }

    @Test func theSignersOwnWordsStayWhenACheckFails() {
        var (driver, _) = SignerHealthTests.running(SignerHealthTests.configuration(retries: 3))
        driver.send(.notify(SignerNotification(parsing: Array("STATUS=signing, 2 of 3 peers".utf8))!))
        SignerHealthTests.probe(&driver)
        driver.send(SignerHealthTests.fail, after: .milliseconds(50))
        #expect(driver.status.status == "signing, 2 of 3 peers")
    }
}
