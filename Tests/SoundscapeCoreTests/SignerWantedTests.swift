import SoundscapeCore
import Testing

/// Whether the signer is wanted is the machine's rule (issue 36: it was decided in the
/// daemon's supervisor): the session, `signer-keep-running` once a session began, and
/// never again after a shutdown or a retirement. In virtual time, on the pure machine.
@Suite struct SignerWantedTests {
    typealias D = SignerDriver

    static func configuration(keepRunning: Bool) -> SignerMachine.Configuration {
        var configuration = D.configuration()
        configuration.keepRunning = keepRunning
        return configuration
    }

    @Test func wantedFollowsTheSessionWithoutKeepRunning() {
        var driver = D(Self.configuration(keepRunning: false))
        #expect(!driver.machine.wanted)
        #expect(driver.send(.session(true)) == [.spawn])
        driver.send(.spawned(pid: 7), after: .milliseconds(10))
        let stop = driver.send(.session(false))
        #expect(stop.contains(.terminate(.term)), "\(stop)")
        #expect(!driver.machine.wanted)
    }

    @Test func keepRunningKeepsItWantedOnceASessionBegan() {
        var driver = D(Self.configuration(keepRunning: true))
        // No session yet: keep-running alone starts nothing.
        #expect(driver.send(.session(false)) == [])
        #expect(!driver.machine.wanted)
        #expect(driver.send(.session(true)) == [.spawn])
        driver.send(.spawned(pid: 7), after: .milliseconds(10))
        #expect(driver.send(.session(false)) == [], "a stop leaves the signer running")
        #expect(driver.machine.wanted)
        #expect(driver.status.state == .running)
    }

    @Test func aReloadThatTurnsKeepRunningOffStopsASignerNoSessionWants() {
        var driver = D(Self.configuration(keepRunning: true))
        driver.send(.session(true))
        driver.send(.spawned(pid: 7), after: .milliseconds(10))
        driver.send(.session(false))
        let actions = driver.reconfigure(Self.configuration(keepRunning: false))
        #expect(actions.contains(.terminate(.term)), "\(actions)")
        #expect(!driver.machine.wanted)
    }

    @Test(arguments: [SignerMachine.Input.shutdown, .retire])
    func afterShutdownOrRetirementItIsNeverWantedAgain(end: SignerMachine.Input) {
        var driver = D(Self.configuration(keepRunning: true))
        driver.send(.session(true))
        driver.send(.spawned(pid: 7), after: .milliseconds(10))
        #expect(driver.send(end).contains(.terminate(.term)))
        #expect(driver.send(.session(true)) == [], "a session after the end starts nothing")
        #expect(!driver.machine.wanted)
        #expect(driver.machine.lifetime == (end == .shutdown ? .shuttingDown : .retired))
    }
}
