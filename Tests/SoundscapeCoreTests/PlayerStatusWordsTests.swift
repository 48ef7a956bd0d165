import SoundscapeCore
import Testing

/// What `soundscapectl status` and `play` say: the real cause when the soundscape is wanted
/// but not heard (issue 37: a failed signer was blamed on the audio output).
@Suite struct PlayerStatusWordsTests {
    func status(
        _ state: PlayerState, playing: Bool = false, interruptions: [InterruptionCause] = [], cue: Bool = false,
        signer: SignerStatus? = nil
    ) -> PlayerStatus {
        var status = PlayerStatus(
            state: state, isPlaying: playing, soundscape: SoundscapeID("rain")!, volume: Volume(clamping: 40),
            route: "speaker", wantsPlaying: true, signer: signer)
        status.interruptions = interruptions.map(\.rawValue)
        status.cuePlaying = cue
        return status
    }

    @Test func playBlamesTheSignerWhenTheSignerHoldsTheSound() throws {
        let failed = SignerStatus(state: .starting, pid: nil, restarts: 0, lastExit: "exited with status 5")
        let hold = try #require(status(.interrupted, interruptions: [.signerDown], signer: failed).playHold)
        #expect(hold.contains("waits for the signer host, which is down (starting, 0 restarts, last exited with status 5)"), "\(hold)")
        #expect(hold.contains("play restarts a signer that failed"), "\(hold)")
        #expect(!hold.contains("audio output"), "\(hold)")
    }

    @Test func playNamesTheOutputOnlyWhenTheOutputIsTheCause() throws {
        #expect(status(.playing, playing: true).playHold == nil)
        let recovering = try #require(status(.recovering).playHold)
        #expect(recovering == "rain will play as soon as audio output is available (state: recovering)")
        let muted = try #require(status(.interrupted, interruptions: [.muted]).playHold)
        #expect(muted.contains("the volume is 0"), "\(muted)")
    }

    @Test func stateSaysSignerDownInCueAndInSilenceMode() {
        #expect(status(.interrupted, interruptions: [.signerDown], cue: true).stateInWords == "interrupted (signer down: the cue plays)")
        #expect(status(.interrupted, interruptions: [.signerDown]).stateInWords == "interrupted (signer down: silent)")
        #expect(status(.interrupted, interruptions: [.communicationStream]).stateInWords == "interrupted (no audio flowing)")
        #expect(status(.interrupted, interruptions: [.muted]).stateInWords == "interrupted (volume 0: silent)")
        #expect(status(.playing, playing: true).stateInWords == "playing")
        #expect(status(.resuming).stateInWords == "resuming (sound follows in a moment)")
    }

    /// Issue 37: a signer that gave up must say why and what to run.
    @Test func signerSummaryNamesHealthAndTheLastExitOnlyWhileNoneRuns() {
        let running = SignerStatus(state: .running, pid: 7, restarts: 1, lastExit: "exited with status 3", health: .unhealthy)
        #expect(running.summary == "running, pid 7, 1 restart, UNHEALTHY (its health check fails)")
        let failed = SignerStatus(state: .failed, pid: nil, restarts: 4, lastExit: "killed by signal 9 (SIGKILL)")
        #expect(
            failed.summary
                == "failed, 4 restarts, last killed by signal 9 (SIGKILL); it reached signer-crash-limit: `soundscapectl play` starts it again")
    }
}
