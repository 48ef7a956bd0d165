import SoundscapeCore
import Testing
@testable import SoundscapeDaemon

@Suite struct StatusLineTests {
    private func status(
        _ state: PlayerState, playing: Bool = false, route: String? = nil,
        signer: SignerStatus? = nil
    ) -> PlayerStatus {
        PlayerStatus(
            state: state, isPlaying: playing, soundscape: SoundscapeID("ocean-waves")!,
            volume: Volume(clamping: 50), route: route, wantsPlaying: state != .stopped, signer: signer)
    }

    @Test func linesForEachState() {
        #expect(
            SystemdStatusLine.text(for: status(.playing, playing: true, route: "speaker"))
                == "Playing ocean-waves at 50% on speaker")
        #expect(SystemdStatusLine.text(for: status(.playing)) == "Starting ocean-waves at 50%")
        #expect(SystemdStatusLine.text(for: status(.stopped)) == "Stopped (ocean-waves at 50% when played)")
        #expect(SystemdStatusLine.text(for: status(.interrupted)) == "Interrupted; ocean-waves at 50% resumes when allowed")
        #expect(
            SystemdStatusLine.text(for: status(.recovering), reason: .serverLost)
                == "PipeWire not available; retrying (ocean-waves at 50%)")
        #expect(
            SystemdStatusLine.text(for: status(.recovering), reason: .stalled)
                == "No audio flowing; recovering (ocean-waves at 50%)")
    }
}

extension StatusLineTests {
    @Test func signerIsMentionedWhileItMatters() {
        let running = SignerStatus(state: .running, pid: 123, restarts: 0, lastExit: nil)
        #expect(
            SystemdStatusLine.text(for: status(.playing, playing: true, signer: running))
                == "Playing ocean-waves at 50%; signer running (pid 123)")
        let unhealthy = SignerStatus(state: .running, pid: 123, restarts: 2, lastExit: nil, health: .unhealthy)
        #expect(
            SystemdStatusLine.text(for: status(.playing, playing: true, signer: unhealthy))
                == "Playing ocean-waves at 50%; signer running, unhealthy (pid 123)")
        let stopped = SignerStatus(state: .stopped, pid: nil, restarts: 0, lastExit: nil)
        #expect(SystemdStatusLine.text(for: status(.stopped, signer: stopped)) == "Stopped (ocean-waves at 50% when played)")
    }
}
