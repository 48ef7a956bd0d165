import Testing
import SoundscapeCore

@Suite struct PlayerMachineTests {
    typealias D = MachineDriver

    // MARK: Starting

    @Test func firstPlayStartsOutputAndPersistsButAnnouncesOnlyOnceStreaming() {
        var driver = D()
        #expect(driver.send(.outputConnected) == [])
        #expect(driver.status.state == .stopped)

        let start = driver.now
        let actions = driver.send(.play(D.rain))
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: true)),
                .startOutput(D.rain, D.half, .gentle),
                .scheduleTick(at: start + D.timeout),
            ])
        #expect(driver.machine.isSettling(now: driver.now))
        // Still settling: no event yet, and status says it is on its way (out of silence).
        #expect(
            driver.status
                == PlayerStatus(
                    state: .resuming, isPlaying: false, soundscape: D.rain,
                    volume: D.half, route: nil, wantsPlaying: true))

        // A tick inside the grace period changes nothing.
        #expect(driver.send(.tick, after: .seconds(1)) == [])

        #expect(driver.send(.outputStreaming(true), after: .milliseconds(500)) == [.emit(.started, message: nil)])
        #expect(!driver.machine.isSettling(now: driver.now))
        #expect(
            driver.status
                == PlayerStatus(
                    state: .playing, isPlaying: true, soundscape: D.rain,
                    volume: D.half, route: nil, wantsPlaying: true))
        // Repeating the fact is not news.
        #expect(driver.send(.outputStreaming(true)) == [])
    }

    @Test func playWithoutPipeWireIsRecoveringAndStartsOnceConnected() {
        var driver = D()
        let actions = driver.send(.play(D.rain))
        #expect(actions == [.persist(driver.desired(wantsPlaying: true)), .emit(.serverLost, message: nil)])
        #expect(driver.status.state == .recovering)
        #expect(driver.status.isPlaying == false)
        #expect(driver.status.wantsPlaying)
        // Ticks while there is no server do nothing more.
        #expect(driver.send(.tick, after: .seconds(10)) == [])

        let connectedAt = driver.now + .seconds(1)
        #expect(
            driver.send(.outputConnected, after: .seconds(1)) == [
                .startOutput(D.rain, D.half, .gentle), .scheduleTick(at: connectedAt + D.timeout),
                .emit(.serverRestored, message: nil),
            ])
        #expect(driver.status.state == .recovering)
        // The session's first audible moment is its start, however long it took.
        #expect(driver.send(.outputStreaming(true), after: .milliseconds(200)) == [.emit(.started, message: nil)])
        #expect(driver.status.state == .playing)
    }

    @Test func restoredWishToPlayStartsTheOutputOnConnect() {
        var driver = D(wantsPlaying: true, soundscape: D.wind)
        #expect(driver.status.state == .recovering)
        let actions = driver.send(.outputConnected)
        #expect(actions == [.startOutput(D.wind, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout)])
        #expect(!actions.contains { if case .persist = $0 { true } else { false } })
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
        #expect(driver.status.state == .playing)
        #expect(driver.status.soundscape == D.wind)
    }

    @Test func outputConnectedIsIgnoredUnlessTheOutputWasUnavailable() {
        var driver = D.playing()
        #expect(driver.send(.outputConnected) == [])
        #expect(driver.status.state == .playing)
    }

    // MARK: Stopping

    @Test func stopWhilePlayingStopsPersistsAndAnnouncesAtOnce() {
        var driver = D.playing()
        #expect(
            driver.send(.stop) == [
                .persist(driver.desired(wantsPlaying: false)), .stopOutput, .emit(.stopped, message: nil),
            ])
        #expect(driver.machine.output == .stopping)
        #expect(
            driver.status
                == PlayerStatus(
                    state: .stopped, isPlaying: false, soundscape: D.rain,
                    volume: D.half, route: nil, wantsPlaying: false))
        #expect(driver.send(.outputStreaming(false)) == [])
        #expect(driver.send(.outputStopped, after: .milliseconds(250)) == [])
        #expect(driver.machine.output == .idle)
        // A second stop is a no-op.
        #expect(driver.send(.stop) == [])
    }

    @Test func playDuringTheFadeOutStartsAgain() {
        var driver = D.playing()
        driver.send(.stop)
        #expect(driver.machine.output == .stopping)
        // The stream still runs during the fade, so the restart is audible at once: no waiting for a fact
        // that will not come (the graph never stopped scheduling us).
        let actions = driver.send(.play(D.rain), after: .milliseconds(100))
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: true)),
                .startOutput(D.rain, D.half, .gentle),
                .scheduleTick(at: driver.now + D.timeout),
                .emit(.started, message: nil),
            ])
        #expect(driver.machine.output == .active(soundscape: D.rain, streaming: true, since: driver.now))
        // A late "fade-out ended" must not undo the restart.
        #expect(driver.send(.outputStopped) == [])
        #expect(driver.machine.output == .active(soundscape: D.rain, streaming: true, since: driver.now))
        #expect(driver.send(.outputStreaming(true)) == [])
        #expect(driver.status.state == .playing)
    }

    @Test func playAfterTheFadeOutEndedWaitsForTheGraph() {
        var driver = D.playing()
        driver.send(.stop)
        driver.send(.outputStreaming(false))
        driver.send(.outputStopped)
        let actions = driver.send(.play(D.rain), after: .milliseconds(100))
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: true)),
                .startOutput(D.rain, D.half, .gentle),
                .scheduleTick(at: driver.now + D.timeout),
            ])
        #expect(driver.machine.output == .active(soundscape: D.rain, streaming: false, since: driver.now))
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
    }

    @Test func stopWhileSettlingStopsWithoutAnEvent() {
        var driver = D()
        driver.send(.outputConnected)
        driver.send(.play(D.rain))
        // Nothing was announced yet, so there is nothing to take back.
        #expect(driver.send(.stop) == [.persist(driver.desired(wantsPlaying: false)), .stopOutput])
        #expect(driver.status.state == .stopped)
    }

    // MARK: Pausing

    @Test func pauseFadesOutLikeStopButKeepsTheSession() {
        var driver = D.playing()
        let paused = DesiredState(intent: .paused, soundscape: D.rain, volume: D.half)
        #expect(driver.send(.pause) == [.persist(paused), .stopOutput, .emit(.paused, message: nil)])
        #expect(driver.machine.output == .stopping)
        #expect(driver.desired.wantsSession && !driver.desired.wantsPlaying)
        #expect(
            driver.status
                == PlayerStatus(
                    state: .paused, isPlaying: false, soundscape: D.rain,
                    volume: D.half, route: nil, wantsPlaying: false))
        driver.send(.outputStreaming(false))
        #expect(driver.send(.outputStopped) == [])
        #expect(driver.machine.output == .idle)
        // A second pause, and facts while paused, change nothing.
        #expect(driver.send(.pause) == [])
        #expect(driver.send(.tick, after: .seconds(10)) == [])
    }

    @Test func playResumesAPausedSession() {
        var driver = D.playing()
        driver.send(.pause)
        driver.send(.outputStreaming(false))
        driver.send(.outputStopped)
        #expect(
            driver.send(.play(D.rain), after: .seconds(5)) == [
                .persist(driver.desired(wantsPlaying: true)), .startOutput(D.rain, D.half, .gentle),
                .scheduleTick(at: driver.now + D.timeout),
            ])
        // The session was audible before the pause: its return is `resumed`, not `started`.
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        #expect(driver.status.state == .playing)
    }

    @Test func stopEndsAPausedSessionAndPauseDoesNothingWhenStopped() {
        var driver = D.playing()
        driver.send(.pause)
        #expect(driver.send(.stop) == [.persist(driver.desired(wantsPlaying: false)), .emit(.stopped, message: nil)])
        #expect(driver.status.state == .stopped)
        #expect(driver.send(.pause) == [], "nothing to pause without a session")
        #expect(driver.desired.intent == .stopped)
    }

    @Test func aRestoredPauseStaysSilentWhenTheOutputConnects() {
        var driver = D(soundscape: D.wind)
        driver.machine = PlayerMachine(
            desired: DesiredState(intent: .paused, soundscape: D.wind, volume: D.half),
            configuration: .init(startTimeout: D.timeout))
        #expect(driver.status.state == .paused)
        #expect(driver.send(.outputConnected) == [.emit(.paused, message: nil)])
        #expect(driver.machine.output == .idle)
    }

    @Test func anInterruptionDuringAPauseIsNotNews() {
        var driver = D.playing()
        driver.send(.pause)
        let call = GraphFacts(
            sinks: [.init(name: "speaker", isCallRoute: false)], defaultSink: "speaker",
            communicationStreams: ["Linphone"])
        #expect(driver.send(.graphChanged(call)).emits == [])
        #expect(driver.status.state == .paused)
    }

    // MARK: Volume and soundscape

    @Test func volumeChangeSetsPersistsAndAnnounces() {
        var driver = D.playing()
        let seventy = Volume(percent: 70)!
        #expect(
            driver.send(.setVolume(seventy)) == [
                .persist(driver.desired(wantsPlaying: true, volume: seventy)),
                .setVolume(seventy),
                .emit(.volumeChanged, message: nil),
            ])
        #expect(driver.status.volume == seventy)
        #expect(driver.send(.setVolume(seventy)) == [])
    }

    @Test func volumeChangeWhileStoppedIsStillPersistedAndAnnounced() {
        var driver = D()
        let actions = driver.send(.setVolume(Volume(percent: 10)!))
        #expect(actions.emits == [.volumeChanged])
        #expect(actions.contains(.persist(driver.desired(wantsPlaying: false, volume: Volume(percent: 10)!))))
        #expect(!actions.startsOutput)
    }

    @Test func switchingSoundscapeWhilePlayingCrossfadesWithoutRestarting() {
        var driver = D.playing()
        let actions = driver.send(.play(D.ocean))
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: true, soundscape: D.ocean)),
                .switchSoundscape(D.ocean, D.half),
                .emit(.soundscapeChanged, message: nil),
            ])
        #expect(driver.status.soundscape == D.ocean)
        #expect(driver.status.state == .playing)
    }

    @Test func playingWhatAlreadyPlaysDoesNothing() {
        var driver = D.playing()
        #expect(driver.send(.play(D.rain)) == [])
    }

    @Test func choosingAnotherSoundscapeWhileStoppedOnlyAnnouncesTheStart() {
        var driver = D()
        driver.send(.outputConnected)
        let actions = driver.send(.play(D.ocean))
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: true, soundscape: D.ocean)),
                .startOutput(D.ocean, D.half, .gentle),
                .scheduleTick(at: driver.now + D.timeout),
            ])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
    }
}
