import Foundation
import SoundscapeAudio
import SoundscapeCore
@testable import SoundscapeStore
import Synchronization
import Testing
import TestSupport
@testable import SoundscapeDaemon

/// The `Player` actor, driven through its commands and a fake output's facts.
/// Everything else is real: the built-in soundscape files, SQLite, the event
/// hub, the worker thread and (where a test needs one) a signer host process.
@Suite("Player over a fake output", .serialized)
struct PlayerTests {
    typealias H = PlayerHarness

    static func volume(_ percent: Int) -> Volume { Volume(percent: percent)! }

    @Test func restoresTheSavedSessionAndPlaysItOnceTheOutputConnects() async throws {
        let harness = try H(saved: PersistedState(volume: 30, soundscape: "rain", wantsPlaying: true))
        try await harness.start()
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.rain, Self.volume(30), .prompt))
        harness.output.report(.streaming(true))
        let started = try await harness.nextEvent(.started)
        #expect(started.status.state == .playing)
        #expect(started.status.soundscape == H.rain)
        await harness.shutdown()
        #expect(try await harness.savedState()?.wantsPlaying == true, "a shutdown keeps the wish to play")
    }

    @Test func aRestoredSessionGoesToTheOutputBeforeTheSignerHostStarts() async throws {
        let signer = SignerConfiguration(command: ["/bin/sh", "-c", "exec cat >/dev/null"])
        let harness = try H(saved: PersistedState(volume: 40, soundscape: "rain", wantsPlaying: true), signer: signer)
        // What the event hub said about the signer host when the play reached the output.
        let signerAtPlay = Mutex<SignerStatus??>(nil)
        harness.output.whenCalled { [hub = harness.hub] call in
            if case .play = call { signerAtPlay.withLock { $0 = .some(hub.latest.status?.signer) } }
        }
        // Connected before the saved state is loaded, as a restart usually finds it.
        harness.output.report(.connected)
        try await harness.start()
        try await harness.output.waitForCall(.play(H.rain, Self.volume(40), .prompt))
        let started = try await harness.nextEvent(.signerStarted)
        #expect(started.status.signer?.pid != nil)
        let seen = try #require(signerAtPlay.withLock { $0 }, "the play was not observed")
        #expect(seen?.pid == nil, "the signer host was spawned before the restored session's play: \(String(describing: seen))")
        await harness.shutdown()
    }

    @Test func theSignerHostStartsWithinItsBoundWhenTheOutputSaysNothing() async throws {
        let signer = SignerConfiguration(command: ["/bin/sh", "-c", "exec cat >/dev/null"])
        let harness = try H(saved: PersistedState(volume: 40, soundscape: "rain", wantsPlaying: true), signer: signer)
        try await harness.start()
        // The saved state is loaded; with no fact from the output, the host waits for its bound.
        #expect(await harness.player.status().signer?.pid == nil)
        try await harness.clock.waitForScheduledCall("the signer host's start bound")
        harness.clock.advance(by: Player.signerStartBound)
        #expect(try await harness.nextEvent(.signerStarted).status.signer?.pid != nil)
        #expect(!harness.output.calls.contains { if case .play = $0 { true } else { false } })
        await harness.shutdown()
    }

    @Test func playOpensTheFileAndRepliesOnceTheGraphRunsTheStream() async throws {
        let harness = try H()
        try await harness.start()
        harness.output.report(.connected)
        let player = harness.player
        let reply = Task { try await player.play(H.wind) }
        try await harness.output.waitForCall(.play(H.wind, .default))
        harness.output.report(.streaming(true))
        let status = try await reply.value
        #expect(status.state == .playing)
        #expect(status.soundscape == H.wind)
        #expect(
            try await harness.savedState()
                == PersistedState(
                    volume: Volume.default.percent, soundscape: "wind",
                    wantsPlaying: true))
        await harness.shutdown()
    }

    @Test func anAnsweredChangeIsAlreadyOnDisk() async throws {
        let harness = try H(saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: true))
        try await harness.start()
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.rain, Self.volume(50), .prompt))
        harness.output.report(.streaming(true))
        _ = try await harness.nextEvent(.started)
        // Read through a second connection at once, without waiting for the player's writes:
        // a client that was answered may be followed by a SIGKILL.
        let onDisk = { try StateStore(directory: harness.directory.appendingPathComponent("state").path) }
        _ = await harness.player.setVolume(Self.volume(30))
        #expect(try onDisk().load()?.volume == 30)
        _ = try await harness.player.setPreference("duck-level", to: "40")
        #expect(try onDisk().loadPreferences()?.duckLevel == 40)
        _ = await harness.player.pause()
        #expect(try onDisk().load()?.paused == true)
        await harness.shutdown()
    }

    @Test func aLockedDatabaseDelaysTheWriteNotTheAnswer() async throws {
        let harness = try H(
            saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: false),
            saveWait: .milliseconds(200))
        try await harness.start()
        harness.output.report(.connected)
        // Another process holds the write lock: SQLite waits up to its 2 s busy timeout.
        let holder = try SQLiteConnection(
            path: harness.directory.appendingPathComponent("state").appendingPathComponent(StateStore.fileName).path)
        try holder.execute("BEGIN IMMEDIATE")
        let player = harness.player
        let answer = Task { await player.setVolume(Self.volume(30)) }
        // The answer waits for its write, bounded by a call on the player's clock: at the
        // bound it goes out, well before SQLite gives up on the lock.
        try await harness.clock.waitForScheduledCall("the bound on the answer's write")
        harness.clock.advance(by: .milliseconds(200))
        let status = try await withTimeout("the answer at its bound (SQLite's busy timeout is 2 s)", seconds: 1.5) {
            await answer.value
        }
        #expect(status.volume == Self.volume(30))
        // Released within the busy timeout, the same write goes through.
        try holder.execute("COMMIT")
        #expect(try await harness.savedState()?.volume == 30)
        await harness.shutdown()
    }

    @Test func aSwitchDuringADuckKeepsTheDuckedVolume() async throws {
        let harness = try H(
            saved: PersistedState(volume: 100, soundscape: "rain", wantsPlaying: true),
            preferences: Preferences(interruptionMode: .duck, duckLevel: 50, autoResume: true, pinnedSink: nil))
        try await harness.start()
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.rain, Self.volume(100), .prompt))
        harness.output.report(.streaming(true))
        try await harness.nextEvent(.started)

        harness.output.report(
            .graph(
                GraphFacts(
                    sinks: [.init(name: "speaker", isCallRoute: false)], defaultSink: "speaker",
                    communicationStreams: ["Linphone (Communication)"])))
        try await harness.output.waitForCall(.setVolume(Self.volume(50)))
        let status = try await harness.player.play(H.wind)
        #expect(status.ducked)
        try await harness.output.waitForCall(.play(H.wind, Self.volume(50)))
        #expect(!harness.output.calls.contains(.play(H.wind, Self.volume(100))), "the switch went out at full volume")
        await harness.shutdown()
    }

    /// A play that socket-activated the daemon arrives before the output has
    /// connected: its reply waits for the connection, then for the stream.
    @Test func aPlayBeforeTheOutputConnectsWaitsForIt() async throws {
        let harness = try H()
        try await harness.start()
        let player = harness.player
        let reply = Task { try await player.play(H.rain) }
        // The reply is held until the first connection attempt is decided.
        try await withTimeout("the play to wait for the output", seconds: 2) {
            while await player.settlingCount == 0 { await Task.yield() }
        }
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.rain, .default))
        harness.output.report(.streaming(true))
        #expect(try await reply.value.state == .playing)
        await harness.shutdown()
    }

    /// A start the graph never runs is answered at its deadline (3 s on the
    /// player's clock), `recovering`, with `resumeFailed`; not a moment before.
    @Test func aStartTheGraphNeverRunsIsAnsweredAtItsDeadline() async throws {
        let harness = try H()
        try await harness.start()
        harness.output.report(.connected)
        let player = harness.player
        let reply = Task { try await player.play(H.rain) }
        try await harness.output.waitForCall(.play(H.rain, .default))
        try await harness.clock.waitForScheduledCall("the start's deadline")
        harness.clock.advance(by: .milliseconds(2999))
        #expect(await player.settlingCount == 1, "the play was answered before its start's deadline")
        harness.clock.advance(by: .milliseconds(1))
        let status = try await withTimeout("the answer at the start's deadline", seconds: 2) { try await reply.value }
        #expect(status.state == .recovering)
        try await harness.nextEvent(.resumeFailed)
        await harness.shutdown()
    }

    /// The exit waits for the fade-out, and a graph that never finishes it
    /// holds the exit no longer than the bound (200 ms on the player's clock).
    @Test func theExitWaitsForTheFadeOutAtMostItsBound() async throws {
        let harness = try H(saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: true), finishesFades: false)
        try await harness.start()
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.rain, Self.volume(50), .prompt))
        harness.output.report(.streaming(true))
        try await harness.nextEvent(.started)
        // Past the start's deadline, so the only call left on the clock will be the fade-out's bound.
        harness.clock.advance(by: .seconds(3))
        #expect(harness.clock.pendingCount == 0)
        let exited = Mutex(false)
        let exit = Task {
            await harness.shutdown()
            exited.withLock { $0 = true }
        }
        try await harness.output.waitForCall(.stop)
        try await harness.clock.waitForScheduledCall("the bound on the fade-out")
        let exitedEarly = exited.withLock { $0 }
        #expect(!exitedEarly, "the exit did not wait for the fade-out")
        harness.clock.advance(by: .milliseconds(200))
        try await withTimeout("the exit at the fade-out's bound", seconds: 2) { await exit.value }
        #expect(try await harness.savedState()?.wantsPlaying == true)
    }

    @Test func aPlayWithoutPipeWireRepliesOnceTheOutputSaysSo() async throws {
        let harness = try H()
        try await harness.start()
        let player = harness.player
        let reply = Task { try await player.play(H.rain) }
        harness.output.report(.disconnected(reason: "no server"))
        #expect(try await reply.value.state == .recovering)
        await harness.shutdown()
    }

    @Test func aFileThatDoesNotOpenIsRefusedAndChangesNothing() async throws {
        let harness = try H(userFiles: ["broken.opus": Array("not an ogg file".utf8)])
        try await harness.start()
        harness.output.report(.connected)
        await #expect(throws: PlayerError.self) { try await harness.player.play(SoundscapeID("broken")!) }
        let event = try await harness.nextEvent(.decodeError)
        #expect(event.message?.contains("broken") == true)
        #expect(await harness.player.status().state == .stopped)
        #expect(!harness.output.calls.contains { if case .play = $0 { true } else { false } })
        await #expect(throws: PlayerError.noSuchSoundscape(SoundscapeID("missing")!)) {
            try await harness.player.play(SoundscapeID("missing")!)
        }
        await harness.shutdown()
    }

    @Test func aSavedSoundscapeThatNoLongerOpensFallsBackToTheDefault() async throws {
        let harness = try H(
            saved: PersistedState(volume: 40, soundscape: "broken", wantsPlaying: true),
            userFiles: ["broken.opus": Array("not an ogg file".utf8)])
        try await harness.start()
        let notice = try await harness.nextEvent(.soundscapeChanged)
        #expect(notice.message?.contains("cannot play 'broken'") == true, "\(notice.message ?? "no message")")
        #expect(notice.status.soundscape == H.ocean)
        harness.output.report(.connected)
        try await harness.output.waitForCall(.play(H.ocean, Self.volume(40), .prompt))
        // The user's choice stays saved: the file may be mended by the next start.
        #expect(try await harness.savedState()?.soundscape == "broken")
        await harness.shutdown()
    }

    @Test func statusIsAnsweredWhileTheWorkerThreadIsBusy() async throws {
        let harness = try H()
        try await harness.start()
        harness.output.report(.connected)
        // Hold the worker as a slow disk would: the actor must still answer.
        let release = DispatchSemaphore(value: 0)
        harness.worker.submit { release.wait() }
        let player = harness.player
        let status = try await withTimeout("a status while the worker is busy", seconds: 2) { await player.status() }
        #expect(status.state == .stopped)
        let volume = try await withTimeout("a volume change while the worker is busy", seconds: 2) {
            await player.setVolume(Self.volume(20))
        }
        #expect(volume.volume == Self.volume(20))
        // A play needs the worker (to open the file): it waits, and status is still answered meanwhile.
        let play = Task { try await player.play(H.rain) }
        _ = try await withTimeout("a status while a play waits for the worker", seconds: 2) { await player.status() }
        release.signal()
        try await harness.output.waitForCall(.play(H.rain, Self.volume(20)))
        harness.output.report(.streaming(true))
        #expect(try await play.value.state == .playing)
        await harness.shutdown()
    }

    @Test func pauseKeepsTheSignerHostAndARestartRestoresThePause() async throws {
        let signer = SignerConfiguration(command: ["/bin/sh", "-c", "exec sleep infinity"])
        let harness = try H(signer: signer)
        try await harness.start()
        harness.output.report(.connected)
        let player = harness.player
        let reply = Task { try await player.play(H.rain) }
        try await harness.output.waitForCall(.play(H.rain, .default))
        harness.output.report(.streaming(true))
        _ = try await reply.value
        let started = try await harness.nextEvent(.signerStarted)
        let pid = try #require(started.status.signer?.pid)

        let paused = await player.pause()
        #expect(paused.state == .paused)
        try await harness.output.waitForCall(.stop)
        #expect(paused.signer?.state == .running && paused.signer?.pid == pid, "pause must not touch the signer host")
        #expect(kill(pid_t(pid), 0) == 0, "the signer host process is gone")
        #expect(try await harness.savedState()?.paused == true)

        // A play resumes the same session: same signer, `resumed`.
        harness.output.clearCalls()
        let resume = Task { try await player.play(nil) }
        try await harness.output.waitForCall(.play(H.rain, .default))
        harness.output.report(.streaming(true))
        _ = try await resume.value
        #expect(try await harness.nextEvent(.resumed).status.signer?.pid == pid)

        // Pause again, then a restart of the daemon (a new player on the same database) stays paused.
        _ = await player.pause()
        await harness.shutdown()
        #expect(try await harness.savedState()?.paused == true)
    }

    @Test func aRestoredPauseStartsTheSignerButNoSound() async throws {
        let signer = SignerConfiguration(command: ["/bin/sh", "-c", "exec sleep infinity"])
        let harness = try H(
            saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: false, paused: true),
            signer: signer)
        try await harness.start()
        harness.output.report(.connected)
        try await harness.nextEvent(.signerStarted)
        #expect(await harness.player.status().state == .paused)
        #expect(!harness.output.calls.contains { if case .play = $0 { true } else { false } })
        let stopped = await harness.player.stop()
        #expect(stopped.state == .stopped)
        try await harness.nextEvent(.signerStopped, seconds: 10)
        await harness.shutdown()
    }

    @Test func playPauseAndStopTakeEffectInTheOrderCalled() async throws {
        let harness = try H()
        try await harness.start()
        harness.output.report(.connected)
        // Hold the worker so the play waits for its file; the stop called after it must still win.
        let release = DispatchSemaphore(value: 0)
        harness.worker.submit { release.wait() }
        let player = harness.player
        let play = Task { try await player.play(H.rain) }
        // The play holds the session commands (and waits for the worker) before the stop is called.
        try await withTimeout("the play to start", seconds: 2) {
            while await !player.sessionCommandRunning { await Task.yield() }
        }
        let stop = Task { await player.stop() }
        release.signal()
        _ = try await play.value
        #expect(await stop.value.state == .stopped)
        #expect(await player.status().wantsPlaying == false)
        await harness.shutdown()
    }
}
