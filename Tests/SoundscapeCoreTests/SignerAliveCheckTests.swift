import Testing
import SoundscapeCore

/// `GetHealth`'s `signerAlive`: a signer that runs but does not sign is no alive
/// signer. It fails while signing is down, naming why, and while no process runs.
@Suite struct SignerAliveCheckTests {
    static let running = SignerStatus(state: .running, pid: 42, restarts: 0, lastExit: nil, health: .healthy)

    @Test func passesWhileItRunsAndSigns() {
        let check = HealthReport.Check.signer(Self.running, wanted: true, downReason: nil)
        #expect(check == .init(name: "signerAlive", ok: true, detail: nil))
        var starting = Self.running
        starting.state = .starting
        #expect(HealthReport.Check.signer(starting, wanted: true, downReason: nil).ok)
    }

    @Test func failsWhileSigningIsDownThoughTheProcessRuns() {
        var unhealthy = Self.running
        unhealthy.health = .unhealthy
        let check = HealthReport.Check.signer(unhealthy, wanted: true, downReason: "unhealthy")
        #expect(!check.ok)
        #expect(check.detail == "signing is down (unhealthy): signer host running, its health check fails")

        let hung = HealthReport.Check.signer(Self.running, wanted: true, downReason: "hung")
        #expect(!hung.ok)
        #expect(hung.detail == "signing is down (hung): signer host running")
    }

    @Test func failedAndRestartingSayHowTheLastInstanceEnded() {
        let failed = SignerStatus(state: .failed, pid: nil, restarts: 5, lastExit: "exited with status 3")
        let check = HealthReport.Check.signer(failed, wanted: true, downReason: "failed")
        #expect(!check.ok)
        #expect(check.detail == "signing is down (failed): signer host failed (last exited with status 3)")

        // A restart within the start grace: not down yet, but no process is alive.
        let restarting = SignerStatus(state: .restarting, pid: nil, restarts: 1, lastExit: "killed by signal 9 (SIGKILL)")
        let between = HealthReport.Check.signer(restarting, wanted: true, downReason: nil)
        #expect(!between.ok)
        #expect(between.detail == "signer host restarting (last killed by signal 9 (SIGKILL))")
    }

    @Test func passesWhileNobodyWantsIt() {
        let stopped = SignerStatus(state: .stopped, pid: nil, restarts: 0, lastExit: nil)
        #expect(HealthReport.Check.signer(stopped, wanted: false, downReason: nil) == .init(name: "signerAlive", ok: true, detail: "not wanted"))
    }
}
