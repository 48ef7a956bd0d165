import Testing

@testable import SoundscapeCore

private typealias D = MachineDriver

/// The machine with a mix (issue 39): what the output is told, what is saved and
/// announced; and the sleep timer: the fade, the silent keep-alive, the wake.
@Suite struct LayersMachineTests {
    static let mix = try! Mix(layers: [.init(D.rain), .init(D.ocean, level: 40)])

    @Test func playingAMixStartsItWhole() {
        var driver = MachineDriver()
        driver.send(.outputConnected)
        let actions = driver.send(.play(Self.mix))
        #expect(actions.contains(.startOutput(Self.mix, D.half, .gentle)))
        #expect(actions.contains(.persist(DesiredState(intent: .playing, mix: Self.mix, volume: D.half))))
        driver.send(.outputStreaming(true), after: .milliseconds(100))
        #expect(driver.status.layers == Self.mix.layers)
        #expect(driver.status.soundscape == D.rain)
    }

    @Test func aLayerChangedWhilePlayingChangesTheMixAndIsAnnounced() throws {
        var driver = MachineDriver.playing()
        let mix = try Mix(D.rain).setting(D.wind, to: 25)
        let actions = driver.send(.setMix(mix))
        #expect(actions.contains(.changeMix(mix, D.half)))
        #expect(actions.contains(.persist(DesiredState(intent: .playing, mix: mix, volume: D.half))))
        #expect(actions.contains(.emit(.layersChanged, message: "rain + wind=25")))
        #expect(driver.status.state == .playing)
        #expect(driver.send(.setMix(mix)) == [], "the same mix again is no change")
    }

    @Test func aLayerChangedWhileStoppedStartsNothing() throws {
        var driver = MachineDriver()
        driver.send(.outputConnected)
        let mix = try Mix(D.rain).setting(D.wind, to: 25)
        let actions = driver.send(.setMix(mix))
        #expect(!actions.startsOutput)
        #expect(driver.desired.mix == mix && !driver.desired.wantsPlaying)
    }

    @Test func aLayerThatFailsToDecodeLeavesTheRestPlaying() {
        var driver = MachineDriver()
        driver.send(.outputConnected)
        driver.send(.play(Self.mix))
        let actions = driver.send(.decodeFailed(D.ocean, message: "broken", fallback: D.wind))
        #expect(driver.desired.mix == Mix(D.rain))
        #expect(actions.contains(.changeMix(Mix(D.rain), D.half)))
    }

    @Test func theCueReplacesTheWholeMix() {
        var driver = MachineDriver()
        driver.send(.outputConnected)
        driver.send(.play(Self.mix))
        driver.send(.outputStreaming(true), after: .milliseconds(100))
        let actions = driver.send(.signer(.down(reason: "failed")))
        #expect(actions.contains(.changeMix(Mix(.signerDownCue), D.half)))
        #expect(driver.send(.signer(.up)).contains(.changeMix(Self.mix, D.half)))
    }
}

@Suite struct SleepMachineTests {
    @Test func theSoundFadesThenTheKeepAliveGoesOnSilently() {
        var driver = MachineDriver.playing()
        let set = driver.send(.sleep(.seconds(9)))
        #expect(set.contains(.scheduleTick(at: driver.now + .seconds(6))))
        #expect(set.emits == [.sleepChanged])
        #expect(driver.status.sleep?.state == .counting && driver.status.sleep?.remaining == 9)

        #expect(driver.send(.tick, after: .seconds(6)).contains(.dim(over: .seconds(3))))
        #expect(driver.status.sleep?.state == .fading)
        #expect(driver.status.state == .playing, "still audible while it fades")

        let asleep = driver.send(.tick, after: .seconds(3))
        #expect(asleep.contains(.stopOutput), "silent: the stream goes inactive, the sink may suspend")
        let why = "the sleep timer ran out; the keep-alive goes on without sound until play"
        #expect(asleep.contains(.emit(.interrupted, message: why, cause: "asleep")))
        #expect(!asleep.contains { if case .signerSession(false) = $0 { true } else { false } })
        #expect(driver.status.state == .interrupted)
        #expect(driver.status.interruptions == ["asleep"])
        #expect(driver.desired.wantsPlaying, "the session goes on")
        #expect(driver.status.sleep == SleepStatus(state: .asleep))
    }

    @Test func playWakesTheSound() {
        var driver = MachineDriver.playing()
        driver.send(.sleep(.seconds(3)))
        driver.send(.tick, after: .seconds(2))
        driver.send(.tick, after: .seconds(1))
        driver.send(.outputStopped)
        let woken = driver.send(.play(D.rain))
        #expect(woken.first == .undim)
        #expect(woken.contains(.startOutput(D.rain, D.half, .gentle)))
        #expect(driver.status.sleep == nil)
    }

    @Test func whileAsleepTheCueStaysSilentButTheSignerIsStillNews() {
        var driver = MachineDriver.playing()
        driver.send(.sleep(.seconds(3)))
        driver.send(.tick, after: .seconds(2))
        driver.send(.tick, after: .seconds(1))
        driver.send(.outputStopped)
        let down = driver.send(.signer(.down(reason: "failed")))
        #expect(!down.startsOutput, "no chime at 3 a.m.")
        #expect(driver.status.interruptions == ["signerDown", "asleep"])
        // Woken while signing is still down: the cue, not the mix.
        #expect(driver.send(.play(D.rain)).contains(.startOutput(Mix(.signerDownCue), D.half, .gentle)))
    }

    @Test func cancellingDuringTheFadeBringsTheSoundBack() {
        var driver = MachineDriver.playing()
        driver.send(.sleep(.seconds(9)))
        driver.send(.tick, after: .seconds(7))
        let off = driver.send(.sleep(nil))
        #expect(off.contains(.undim))
        #expect(off.emits == [.sleepChanged])
        #expect(driver.status.sleep == nil)
        #expect(driver.send(.sleep(nil)) == [], "off when off is no news")
    }

    @Test func stopEndsTheTimer() {
        var driver = MachineDriver.playing()
        driver.send(.sleep(.seconds(60)))
        driver.send(.stop)
        #expect(driver.status.sleep == nil)
        #expect(driver.send(.tick, after: .seconds(60)).contains(.dim(over: .seconds(20))) == false)
    }
}
