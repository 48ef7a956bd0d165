import Foundation
import SoundscapeCore
import Testing

/// A degraded check (a monitoring plugin's WARNING): the signer signs, not all is
/// well. It is news and the signer's status line, never a failure, and never down.
@Suite struct SignerDegradedTests {
    typealias H = SignerHealthTests

    static let warn = SignerMachine.Input.probeFinished(.degraded(output: "PEERS WARNING - 2/3 online"))

    @Test func degradedIsNewsAndTheStatusLineButNeitherAFailureNorDown() {
        var (driver, _) = H.running(H.configuration(retries: 1))
        driver.showsVerdict = true
        H.probe(&driver)
        let actions = driver.send(Self.warn, after: .seconds(1))
        #expect(
            actions.filter { if case .scheduleTick = $0 { false } else { true } } == [
                .emit(.signerStatus, message: "PEERS WARNING - 2/3 online"),
                .emit(.signerDegraded, message: "PEERS WARNING - 2/3 online"),
            ])
        #expect(driver.status.health == .degraded)
        #expect(driver.status.status == "PEERS WARNING - 2/3 online")
        #expect(!driver.machine.isDown)
        // Still degraded: no second event; the verdict stays up however long it lasts.
        for _ in 0..<5 {
            H.probe(&driver)
            #expect(driver.send(Self.warn, after: .seconds(1)).reasons == [])
        }
        #expect(!driver.machine.isDown)
        #expect(driver.status.state == .running, "retries 1: a failure would have restarted it")
        // Healthy again: that is news too.
        H.probe(&driver)
        #expect(driver.send(H.pass, after: .seconds(1)).reasons == [.signerStatus, .signerHealthy])
        #expect(driver.status.health == .healthy)
    }

    @Test func degradedEndsAStreakOfFailures() {
        var (driver, _) = H.running(H.configuration(retries: 3))
        for result in [H.fail, H.fail, Self.warn, H.fail, H.fail] {
            H.probe(&driver)
            #expect(!driver.send(result, after: .seconds(1)).reasons.contains(.signerUnhealthy))
        }
        #expect(driver.status.state == .running)
    }

    @Test func unhealthyThenDegradedIsRestored() throws {
        var (driver, _) = H.running(H.configuration(retries: 1, restart: false))
        driver.showsVerdict = true
        H.probe(&driver)
        #expect(driver.send(H.fail, after: .seconds(1)).reasons == [.signerUnhealthy, .signerDown])
        #expect(driver.machine.isDown)
        H.probe(&driver)
        let back = driver.send(Self.warn, after: .seconds(1))
        #expect(back.reasons == [.signerStatus, .signerDegraded, .signerRestored])
        #expect(back.contains(.availability(.up)), "the sound follows: degraded signs")
        #expect(!driver.machine.isDown)
        #expect(driver.status.health == .degraded)
    }

    @Test func aDegradedVerdictIsNotInheritedByTheNextInstance() throws {
        var (driver, _) = H.running()
        H.probe(&driver)
        driver.send(Self.warn, after: .seconds(1))
        #expect(driver.status.health == .degraded)
        let exit = driver.send(.exited(.exited(code: 1)), after: .seconds(1))
        driver.send(.tick, at: try #require(exit.ticks.first))
        driver.send(.spawned(pid: 11))
        #expect(driver.status.health == .unknown)
    }

    @Test func aSignerThatWasDegradedIsNoQuickFailureWhenItTurnsUnhealthy() throws {
        var configuration = H.configuration(retries: 1)
        configuration.crashLoopLimit = 2
        var (driver, _) = H.running(configuration)
        H.probe(&driver)
        driver.send(Self.warn, after: .seconds(1))
        H.probe(&driver, after: .seconds(60))
        driver.send(H.fail, after: .seconds(1))
        // It proved it signs: not a quick failure, so no crash loop after one.
        let exit = driver.send(.exited(.signaled(15)), after: .milliseconds(10))
        #expect(exit.reasons == [.signerExited, .signerRestarting])
    }

    @Test func statusReadsAHealthItDoesNotKnowAsUnknown() throws {
        let json = #"{"state":"running","pid":4,"restarts":0,"lastExit":null,"health":"wobbly","ready":true,"status":null}"#
        let status = try JSONDecoder().decode(SignerStatus.self, from: Data(json.utf8))
        #expect(status.health == .unknown)
        let degraded = try JSONDecoder().decode(SignerStatus.self, from: Data(json.replacingOccurrences(of: "wobbly", with: "degraded").utf8))
        #expect(degraded.health == .degraded)
    }
}
