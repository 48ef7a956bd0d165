import Testing
import SoundscapeCore

/// Whether signing is down (`SignerDownVerdict`, through `SignerMachine`): the
/// verdict the sound follows.
@Suite struct SignerDownVerdictTests {
    typealias D = SignerDriver

    static func driver(
        grace: Duration = .seconds(10), liveness: Duration? = nil, health: Bool = false,
        crashLoopLimit: Int = 5, type: SignerType = .simple
    ) -> SignerDriver {
        var configuration = D.configuration(crashLoopLimit: crashLoopLimit, liveness: liveness)
        configuration.startGrace = grace
        configuration.type = type
        if health {
            var check = SignerMachine.HealthConfiguration()
            check.retries = 1
            configuration.health = check
        }
        var driver = D(configuration)
        driver.showsVerdict = true
        return driver
    }

    static func down(_ reason: String) -> [SignerMachine.Action] {
        [.availability(.down(reason: reason)), .emit(.signerDown, message: reason)]
    }
    static let restored: [SignerMachine.Action] = [.availability(.up), .emit(.signerRestored, message: nil)]

    static func verdict(_ actions: [SignerMachine.Action]) -> [SignerMachine.Action] {
        actions.filter {
            switch $0 {
            case .availability, .emit(.signerDown, _), .emit(.signerRestored, _): true
            default: false
            }
        }
    }

    @Test func aSignerThatComesUpWithinTheGraceIsNeverDown() {
        var driver = Self.driver()
        let wantedAt = driver.now
        #expect(driver.send(.session(true)) == [.spawn, .scheduleTick(at: wantedAt + .seconds(10))])
        #expect(driver.send(.spawned(pid: 1), after: .seconds(9)) == [.emit(.signerStarted, message: "pid 1")])
        #expect(driver.send(.tick, at: wantedAt + .seconds(10)) == [])
        #expect(!driver.machine.isDown)
    }

    @Test func aSlowStartIsDownAfterTheGraceAndRestoredOnceReadyForAGrace() {
        var driver = Self.driver(type: .notify)
        let wantedAt = driver.now
        driver.send(.session(true))
        driver.send(.spawned(pid: 1), after: .seconds(1))
        #expect(driver.send(.tick, at: wantedAt + .milliseconds(9999)) == [])
        #expect(driver.send(.tick, at: wantedAt + .seconds(10)) == Self.down("not running and ready for 10 s"))
        #expect(driver.machine.isDown)
        #expect(driver.machine.downReason == "not running and ready for 10 s", "what GetHealth's signerAlive names")
        let readyAt = wantedAt + .seconds(15)
        #expect(
            driver.send(SignerNotifyTests.ready, at: readyAt) == [
                .emit(.signerReady, message: nil), .scheduleTick(at: readyAt + .seconds(10)),
            ])
        #expect(driver.send(.tick, at: readyAt + .milliseconds(9999)) == [])
        #expect(driver.send(.tick, at: readyAt + .seconds(10)) == Self.restored)
        #expect(!driver.machine.isDown)
        #expect(driver.machine.downReason == nil)
    }

    @Test func aCrashBackWithinTheGraceDoesNotFlap() throws {
        var driver = Self.driver()
        driver.send(.session(true))
        driver.send(.spawned(pid: 1))
        let crashAt = driver.now + .seconds(60)
        let exit = driver.send(.exited(.exited(code: 1)), at: crashAt)
        #expect(exit.ticks.contains(crashAt + .seconds(10)), "the grace tick")
        driver.send(.tick, at: try #require(exit.ticks.first))
        #expect(Self.verdict(driver.send(.spawned(pid: 2), after: .milliseconds(50))) == [])
        #expect(driver.send(.tick, at: crashAt + .seconds(10)) == [])
        #expect(!driver.machine.isDown)
    }

    @Test func aCrashLoopIsDownOnceAndRestoredOnlyByAnInstanceThatStaysUpForAGrace() throws {
        var driver = Self.driver(crashLoopLimit: 0)
        driver.send(.session(true))
        driver.send(.spawned(pid: 1))
        let firstCrash = driver.now + .seconds(60)
        var actions = driver.send(.exited(.exited(code: 1)), at: firstCrash)
        var downs = 0
        for pid in 2...6 {
            // 1, 2, 4, 8 s of backoff: the grace runs out during the fourth wait.
            for tick in actions.ticks.sorted() {
                let verdict = Self.verdict(driver.send(.tick, at: tick))
                downs += verdict.count / 2
                if tick == firstCrash + .seconds(10) { #expect(verdict == Self.down("not running and ready for 10 s")) }
            }
            actions = driver.send(.spawned(pid: Int32(pid)), after: .milliseconds(10))
            if pid < 6 { actions = driver.send(.exited(.exited(code: 1)), after: .milliseconds(100)) }
        }
        #expect(downs == 1, "down once, not once per crash")
        #expect(Self.verdict(actions) == [])
        let upAt = driver.now
        #expect(actions.ticks == [upAt + .seconds(10)])
        #expect(driver.send(.tick, at: upAt + .seconds(10)) == Self.restored)
    }

    @Test func failedIsDownAtOnce() throws {
        var driver = Self.driver(grace: .seconds(3600), crashLoopLimit: 2)
        driver.send(.session(true))
        let first = driver.spawnAndCrash(pid: 1)
        driver.send(.tick, at: try #require(first.ticks.min()))
        let second = driver.spawnAndCrash(pid: 2)
        #expect(Self.verdict(second) == Self.down("failed"))
        // Play again: a fresh start is no proof; an instance up for the grace is.
        #expect(Self.verdict(driver.send(.resetFailure, after: .seconds(1))) == [])
        #expect(driver.machine.isDown)
        let upAt = driver.now + .seconds(1)
        #expect(Self.verdict(driver.send(.spawned(pid: 3), at: upAt)) == [])
        #expect(driver.send(.tick, at: upAt + .seconds(3600)) == Self.restored)
    }

    @Test func hungIsDownAtOnceAndRestoredOnceTheRestartStaysUp() throws {
        var driver = Self.driver(grace: .seconds(3), liveness: .seconds(5))
        driver.send(.session(true))
        driver.send(.spawned(pid: 1))
        let hung = driver.send(.tick, after: .seconds(5))
        #expect(Self.verdict(hung) == Self.down("hung"))
        let exit = driver.send(.exited(.signaled(15)), after: .seconds(1))
        driver.send(.tick, at: try #require(exit.ticks.min()))
        #expect(Self.verdict(driver.send(.spawned(pid: 2), after: .milliseconds(10))) == [])
        #expect(Self.verdict(driver.send(.tick, after: .seconds(3))) == Self.restored)
    }

    @Test func withAHealthCommandOnlyAPassingProbeEndsDown() throws {
        var driver = Self.driver(health: true)
        driver.send(.session(true))
        driver.send(.spawned(pid: 1))
        #expect(driver.send(.tick, after: .seconds(10)).contains(.probe(timeout: .seconds(5))))
        let unhealthy = driver.send(SignerHealthTests.fail, after: .seconds(1))
        #expect(Self.verdict(unhealthy) == Self.down("unhealthy"))
        let exit = driver.send(.exited(.signaled(15)), after: .seconds(1))
        driver.send(.tick, at: try #require(exit.ticks.min()))
        // The restarted instance runs, and is still down: no probe has passed.
        #expect(Self.verdict(driver.send(.spawned(pid: 2), after: .milliseconds(10))) == [])
        #expect(driver.machine.isDown)
        let probe = driver.send(.tick, after: .seconds(10))
        #expect(probe.contains(.probe(timeout: .seconds(5))))
        #expect(Self.verdict(driver.send(SignerHealthTests.pass, after: .seconds(1))) == Self.restored)
    }

    @Test func withAHealthCommandACrashLoopNeedsAPassToo() throws {
        var driver = Self.driver(health: true, crashLoopLimit: 0)
        let wantedAt = driver.now
        driver.send(.session(true))
        // Three failed starts (1 s, 2 s and 4 s of backoff), the fourth start still under way at the grace.
        for (failAt, retryAt) in [(0, 1), (1, 3), (3, 7)] as [(Int64, Int64)] {
            #expect(Self.verdict(driver.send(.spawnFailed("boom"), at: wantedAt + .seconds(failAt))) == [])
            #expect(driver.send(.tick, at: wantedAt + .seconds(retryAt)).contains(.spawn))
        }
        #expect(Self.verdict(driver.send(.tick, at: wantedAt + .seconds(10))) == Self.down("not running and ready for 10 s"))
        #expect(Self.verdict(driver.send(.spawned(pid: 3), at: wantedAt + .seconds(11))) == [])
        #expect(driver.machine.isDown)
        #expect(driver.send(.tick, at: wantedAt + .seconds(21)).contains(.probe(timeout: .seconds(5))))
        #expect(Self.verdict(driver.send(SignerHealthTests.pass, after: .seconds(1))) == Self.restored)
    }

    @Test func nobodyWantingTheSignerEndsTheVerdictQuietly() {
        var driver = Self.driver(liveness: .seconds(5))
        driver.send(.session(true))
        driver.send(.spawned(pid: 1))
        driver.send(.tick, after: .seconds(5))
        #expect(driver.machine.isDown)
        #expect(Self.verdict(driver.send(.session(false))) == [.availability(.up)])
        #expect(!driver.machine.isDown)
        #expect(Self.verdict(driver.send(.exited(.signaled(15)), after: .seconds(1))) == [])
        // A stopped signer is never down, however long.
        #expect(driver.send(.tick, after: .seconds(3600)) == [])
    }

    @Test func anUnwantedSignerNeverSchedulesTheGrace() {
        var driver = Self.driver()
        #expect(driver.send(.tick, after: .seconds(100)) == [])
        #expect(!driver.machine.isDown)
    }
}
