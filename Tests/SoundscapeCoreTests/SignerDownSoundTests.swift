import SoundscapeCore
import Testing

/// What the sink carries while the signer is down (`signer-down-sound`), and
/// volume off as a silent keep-alive: `PlayerMachine` decides, from facts.
@Suite struct SignerDownSoundTests {
    typealias D = MachineDriver
    static let cue = SoundscapeID.signerDownCue
    static let speaker = "speaker"
    static let onSpeaker = GraphFacts(sinks: [.init(name: speaker, isCallRoute: false)], defaultSink: speaker)
    static let callOnSpeaker = GraphFacts(
        sinks: [.init(name: speaker, isCallRoute: false)], defaultSink: speaker,
        communicationStreams: ["Linphone (Communication)"])

    static func down(_ reason: String = "failed") -> PlayerMachine.Input { .signer(.down(reason: reason)) }
    static let up = PlayerMachine.Input.signer(.up)
    static let interruptedForSigner = PlayerMachine.Action.emit(
        .interrupted, message: "the signer is down (failed); the signer-down cue plays instead", cause: "signerDown")

    static func playing(_ sound: Preferences.SignerDownSound = .cue, mode: Preferences.InterruptionMode = .pause) -> D {
        var driver = D.playing()
        var preferences = Preferences.default
        preferences.signerDownSound = sound
        preferences.interruptionMode = mode
        driver.send(.setPreferences(preferences))
        driver.send(.graphChanged(onSpeaker))
        return driver
    }

    @Test func theCueReplacesTheSoundscapeWhileTheSignerIsDown() {
        var driver = Self.playing()
        #expect(driver.send(Self.down()) == [.switchSoundscape(Self.cue, D.half), Self.interruptedForSigner])
        #expect(driver.status.state == .interrupted)
        #expect(driver.status.isPlaying == false)
        #expect(driver.status.wantsPlaying)
        #expect(driver.status.interruptions == ["signerDown"])
        #expect(driver.status.soundscape == D.rain, "the user's soundscape stays theirs")
        // The cue is at the user's volume, and follows it.
        #expect(
            driver.send(.setVolume(Volume(percent: 80)!))
                == [
                    .persist(driver.desired(wantsPlaying: true, volume: Volume(percent: 80)!)),
                    .setVolume(Volume(percent: 80)!), .emit(.volumeChanged, message: nil),
                ])
        // Back: the soundscape returns in place of the cue.
        #expect(driver.send(Self.up) == [.switchSoundscape(D.rain, Volume(percent: 80)!), .emit(.resumed, message: nil)])
        #expect(driver.status.state == .playing)
        #expect(driver.status.interruptions == [])
    }

    @Test func silenceFadesTheSoundscapeOutAndBringsItBack() {
        var driver = Self.playing(.silence)
        #expect(
            driver.send(Self.down()) == [
                .stopOutput,
                .emit(.interrupted, message: "the signer is down (failed); the soundscape is held off", cause: "signerDown"),
            ])
        #expect(driver.status.interruptions == ["signerDown"])
        driver.send(.outputStreaming(false), after: .milliseconds(300))
        driver.send(.outputStopped)
        #expect(
            driver.send(Self.up, after: .seconds(20))
                == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout)])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
    }

    @Test func keepPlaysOnAsToday() {
        var driver = Self.playing(.keep)
        #expect(driver.send(Self.down()) == [])
        #expect(driver.status.state == .playing)
        #expect(driver.status.isPlaying)
        #expect(driver.status.interruptions == [])
        #expect(driver.send(Self.up) == [])
    }

    @Test func noCueEverPlaysIntoACall() {
        // Duck mode keeps the soundscape under a call; with the signer down it is silence, not the cue.
        var ducking = Self.playing(mode: .duck)
        ducking.send(.graphChanged(Self.callOnSpeaker))
        #expect(ducking.status.ducked)
        #expect(ducking.send(Self.down()).first == .stopOutput)
        #expect(ducking.status.interruptions.contains("signerDown"))
        // Pause mode: already silent for the call; the cue starts only once the call is over.
        var pausing = Self.playing()
        pausing.send(.graphChanged(Self.callOnSpeaker))
        pausing.send(.outputStreaming(false), after: .milliseconds(300))
        pausing.send(.outputStopped)
        #expect(!pausing.send(Self.down()).startsOutput)
        #expect(pausing.status.state == .interrupted)
        let ended = pausing.send(.graphChanged(Self.onSpeaker), after: .seconds(5))
        #expect(ended.contains(.startOutput(Self.cue, D.half, .prompt)))
    }

    @Test func withoutTheCueFileTheSinkFallsSilent() {
        var driver = D(wantsPlaying: true)
        driver.machine = PlayerMachine(desired: driver.desired, configuration: .init(hasSignerDownCue: false))
        driver.send(.outputConnected)
        driver.send(.outputStreaming(true))
        #expect(driver.send(Self.down()).first == .stopOutput)
    }

    @Test func aSignerDownWhileStoppedOrPausedChangesNothing() {
        var driver = D()
        driver.send(.outputConnected)
        #expect(driver.send(Self.down()) == [])
        #expect(driver.status.interruptions == [])
        #expect(driver.status.state == .stopped)
        // A play while the signer is down: the cue, and the answer need not wait for a stream.
        let play = driver.send(.play(D.rain))
        #expect(play.contains(.startOutput(Self.cue, D.half, .gentle)))
        #expect(!driver.machine.isSettling(now: driver.now))
        #expect(driver.status.state == .interrupted)
    }

    @Test func volumeOffStopsTheStreamAndKeepsTheSession() {
        var driver = Self.playing()
        let off = Volume(percent: 0)!
        #expect(
            driver.send(.setVolume(off)) == [
                .persist(driver.desired(wantsPlaying: true, volume: off)), .setVolume(off), .stopOutput,
                .emit(.interrupted, message: "the volume is off; the keep-alive goes on without sound", cause: "muted"),
            ])
        #expect(driver.status.isPlaying == false)
        #expect(driver.status.wantsPlaying)
        #expect(driver.status.interruptions == ["muted"])
        driver.send(.outputStreaming(false), after: .milliseconds(300))
        driver.send(.outputStopped)
        // Even with the signer down: no cue at volume off.
        #expect(!driver.send(Self.down()).startsOutput)
        driver.send(Self.up)
        let raised = Volume(percent: 30)!
        #expect(
            driver.send(.setVolume(raised), after: .seconds(1)) == [
                .persist(driver.desired(wantsPlaying: true, volume: raised)), .setVolume(raised),
                .startOutput(D.rain, raised, .prompt), .scheduleTick(at: driver.now + D.timeout),
                .emit(.volumeChanged, message: nil),
            ])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
    }

    @Test func aPlayAtVolumeOffIsAnsweredAtOnce() {
        var driver = D(volume: Volume(percent: 0)!)
        driver.send(.outputConnected)
        #expect(!driver.send(.play(D.rain)).startsOutput)
        #expect(!driver.machine.isSettling(now: driver.now))
        #expect(driver.status.state == .interrupted)
        #expect(driver.status.interruptions == ["muted"])
    }
}
