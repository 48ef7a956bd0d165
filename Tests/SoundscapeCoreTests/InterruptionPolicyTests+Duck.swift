import Foundation
import Testing
@testable import SoundscapeCore

// MARK: - Duck and ignore modes

extension InterruptionPolicyTests {
    @Suite struct DuckAndIgnore {
        typealias D = MachineDriver

        static let duckHalf = preferences(.duck, duckLevel: 50)

        @Test func setPreferencesPersistsOnlyAChange() {
            var driver = D.playing()
            #expect(driver.send(.setPreferences(Self.duckHalf)) == [.persistPreferences(Self.duckHalf)])
            #expect(driver.send(.setPreferences(Self.duckHalf)) == [])
            #expect(driver.machine.preferences == Self.duckHalf)
        }

        @Test func aCallDucksAndItsEndRestoresTheVolume() {
            var driver = D.playing()
            #expect(driver.send(.setPreferences(Self.duckHalf)) == [.persistPreferences(Self.duckHalf)])
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            driver.send(.routeChanged(speaker))

            #expect(
                driver.send(.graphChanged(callOnSpeaker)) == [
                    .setVolume(volume(25)),
                    .emit(.interrupted, message: "ducked to 50% for a call", cause: "communicationStream"),
                ])
            #expect(driver.machine.effectiveVolume == volume(25))
            var expected = PlayerStatus(
                state: .playing, isPlaying: true, soundscape: D.rain, volume: D.half,
                route: speaker, wantsPlaying: true)
            expected.interruptions = ["communicationStream"]
            expected.ducked = true
            #expect(driver.status == expected)
            #expect(driver.send(.graphChanged(callOnSpeaker)) == [])

            #expect(
                driver.send(.graphChanged(onSpeaker), after: .seconds(60)) == [
                    .setVolume(D.half),
                    .emit(.resumed, message: "the call ended; volume restored"),
                ])
            #expect(
                driver.status
                    == PlayerStatus(
                        state: .playing, isPlaying: true, soundscape: D.rain, volume: D.half,
                        route: speaker, wantsPlaying: true))
            #expect(driver.send(.graphChanged(onSpeaker)) == [])
        }

        @Test func aUserVolumeChangeWhileDuckedAppliesTheDuckedValueAndPersistsTheUsers() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            #expect(
                driver.send(.setVolume(volume(80))) == [
                    .persist(driver.desired(wantsPlaying: true, volume: volume(80))),
                    .setVolume(volume(40)),
                    .emit(.volumeChanged, message: nil),
                ])
            #expect(driver.status.volume == volume(80))
            #expect(driver.status.ducked)
            #expect(
                driver.send(.graphChanged(onSpeaker)) == [
                    .setVolume(volume(80)), .emit(.resumed, message: "the call ended; volume restored"),
                ])
        }

        @Test(arguments: [(50, 50, 25), (33, 30, 9), (100, 0, 0), (80, 100, 80), (1, 99, 0)])
        func theDuckedVolumeIsPercentTimesDuckLevelOver100(user: Int, duckLevel: Int, ducked: Int) {
            var driver = D(volume: volume(user))
            driver.send(.outputConnected)
            driver.send(.play(D.rain))
            driver.send(.outputStreaming(true))
            driver.send(.setPreferences(preferences(.duck, duckLevel: duckLevel)))
            driver.send(.graphChanged(onSpeaker))
            let actions = driver.send(.graphChanged(callOnSpeaker))
            #expect(
                actions == [
                    .setVolume(volume(ducked)),
                    .emit(.interrupted, message: "ducked to \(duckLevel)% for a call", cause: "communicationStream"),
                ])
        }

        @Test func aStartDuringACallStartsDucked() {
            var driver = D()
            driver.send(.outputConnected)
            driver.send(.setPreferences(Self.duckHalf))
            driver.send(.graphChanged(callOnSpeaker))
            #expect(
                driver.send(.play(D.rain)) == [
                    .persist(driver.desired(wantsPlaying: true)),
                    .setVolume(volume(25)),
                    .startOutput(D.rain, volume(25), .gentle),
                    .scheduleTick(at: driver.now + D.timeout),
                    .emit(.interrupted, message: "ducked to 50% for a call", cause: "communicationStream"),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
            #expect(driver.status.ducked)
            #expect(driver.status.state == .playing)
        }

        @Test func switchingFromPauseToDuckDuringACallStartsDucked() {
            var driver = D.playingLinked()
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            let duck = preferences(.duck)
            #expect(
                driver.send(.setPreferences(duck)) == [
                    .persistPreferences(duck),
                    .setVolume(volume(15)),
                    .startOutput(D.rain, volume(15), .prompt),
                    .scheduleTick(at: driver.now + D.timeout),
                    .emit(.interrupted, message: "ducked to 30% for a call", cause: "communicationStream"),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.ducked)
        }

        @Test func switchingFromPauseToIgnoreDuringACallResumes() {
            var driver = D.playingLinked()
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            let ignore = preferences(.ignore)
            #expect(
                driver.send(.setPreferences(ignore)) == [
                    .persistPreferences(ignore), .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.interruptions == ["communicationStream"])
        }

        @Test func ignoreModeChangesNothingAudibleButListsTheCall() {
            let ignore = preferences(.ignore)
            var driver = D.playing()
            #expect(driver.send(.setPreferences(ignore)) == [.persistPreferences(ignore)])
            driver.send(.graphChanged(onSpeaker))
            #expect(driver.send(.graphChanged(callOnSpeaker)) == [])
            var expected = PlayerStatus(
                state: .playing, isPlaying: true, soundscape: D.rain, volume: D.half,
                route: nil, wantsPlaying: true)
            expected.interruptions = ["communicationStream"]
            #expect(driver.status == expected)
            #expect(driver.send(.graphChanged(onSpeaker)) == [])
            #expect(driver.status.interruptions == [])
        }

        @Test(arguments: [Preferences.InterruptionMode.ignore, .duck])
        func theServerCorkingUsDuringANonPausingCallInterrupts(mode: Preferences.InterruptionMode) {
            // WirePlumber's role policy may cork media streams during a call: that is the server's doing.
            var driver = D.playingLinked(with: preferences(mode))
            driver.send(.graphChanged(callOnSpeaker))
            let pausedAt = driver.now + .milliseconds(10)
            #expect(
                driver.send(.outputStreaming(false), after: .milliseconds(10))
                    == [.scheduleTick(at: pausedAt + .seconds(1)), .scheduleTick(at: pausedAt + D.timeout)])
            let actions = driver.send(.tick, after: .seconds(1))
            #expect(actions.emitted.map(\.reason) == [.interrupted])
            #expect(actions.count == 1)
            #expect(driver.status.state == .interrupted)
            #expect(driver.status.interruptions == ["communicationStream", "serverPaused"])
            #expect(driver.send(.tick, after: .seconds(2)) == [])
            // The call ends: still the server's pause.
            // (In duck mode the volume is restored, and a `resumed` "the call ended; volume restored" goes out
            // although the state stays interrupted; see the report. Only the audible part is pinned down here.)
            let ended = driver.send(.graphChanged(onSpeaker))
            #expect(ended.filter { if case .emit = $0 { false } else { true } } == (mode == .duck ? [.setVolume(D.half)] : []))
            #expect(driver.status.state == .interrupted)
            #expect(driver.status.interruptions == ["serverPaused"])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test(arguments: [Preferences.InterruptionMode.ignore, .duck])
        func theServerCorkingUsDuringANonPausingCallIsServerPaused(mode: Preferences.InterruptionMode) {
            var driver = D.playingLinked(with: preferences(mode))
            driver.send(.graphChanged(callOnSpeaker))
            driver.send(.outputStreaming(false), after: .milliseconds(10))
            #expect(
                driver.send(.tick, after: .seconds(1))
                    == [.emit(.interrupted, message: "the server paused our stream", cause: "serverPaused")])
        }

        @Test func autoResumeOffDoesNotStopAfterADuckingCall() {
            let duck = preferences(.duck, duckLevel: 50, autoResume: false)
            var driver = D.playingLinked(with: duck)
            #expect(driver.send(.graphChanged(callOnSpeaker)).first == .setVolume(volume(25)))
            #expect(
                driver.send(.graphChanged(onSpeaker)) == [
                    .setVolume(D.half), .emit(.resumed, message: "the call ended; volume restored"),
                ])
            #expect(driver.desired.wantsPlaying)
        }

        // MARK: Bugs

        @Test
        func changingTheDuckLevelWhileDuckedAppliesTheNewLevel() {
            var driver = D.playingLinked(with: Self.duckHalf)
            #expect(driver.send(.graphChanged(callOnSpeaker)).first == .setVolume(volume(25)))
            let lower = preferences(.duck, duckLevel: 20)
            let actions = driver.send(.setPreferences(lower))
            #expect(driver.machine.effectiveVolume == volume(10))
            #expect(actions.first == .persistPreferences(lower))
            #expect(actions.contains(.setVolume(volume(10))))
        }

        @Test
        func aSwitchWhileDuckedCrossfadesAtTheDuckedVolume() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            // The action carries the volume to apply: the ducked one, not the user's.
            #expect(
                driver.send(.play(D.ocean)) == [
                    .persist(driver.desired(wantsPlaying: true, soundscape: D.ocean)),
                    .switchSoundscape(D.ocean, volume(25)),
                    .emit(.soundscapeChanged, message: nil),
                ])
            #expect(driver.status.ducked)
            // The call ends: the new soundscape comes back to the user's volume.
            #expect(
                driver.send(.graphChanged(onSpeaker)) == [
                    .setVolume(D.half), .emit(.resumed, message: "the call ended; volume restored"),
                ])
        }

        @Test
        func aSwitchAfterTheDuckCrossfadesAtTheUsersVolume() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            driver.send(.graphChanged(onSpeaker))
            #expect(driver.send(.play(D.ocean)).contains(.switchSoundscape(D.ocean, D.half)))
        }

        @Test
        func stopWhileDuckedIsAPlainStop() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            #expect(
                driver.send(.stop) == [
                    .persist(driver.desired(wantsPlaying: false)), .stopOutput, .emit(.stopped, message: nil),
                ])
        }

        @Test
        func aCallRouteWhileDuckedPausesWithTheCallRouteMessage() {
            // A Bluetooth call: the call stream appears first, then the headset switches to its call profile.
            var driver = D.playingLinked(with: Self.duckHalf, graph: facts([sink(speaker), sink(headset)], default: headset), route: headset)
            #expect(
                driver.send(.graphChanged(facts([sink(speaker), sink(headset)], default: headset, calls: [linphone])))
                    .first == .setVolume(volume(25)))
            let actions = driver.send(
                .graphChanged(
                    facts(
                        [sink(speaker), sink(headset, callRoute: true)], default: headset,
                        calls: [linphone])))
            #expect(actions == [.stopOutput, interruptedByHeadset])
        }

        @Test
        func switchingFromDuckToPauseDuringACallPausesWithTheCallMessage() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            let pause = preferences(.pause, duckLevel: 50)
            #expect(driver.send(.setPreferences(pause)) == [.persistPreferences(pause), .stopOutput, interruptedByCall])
        }

        @Test
        func losingTheServerWhileDuckedReportsTheServerLoss() {
            var driver = D.playingLinked(with: Self.duckHalf)
            driver.send(.graphChanged(callOnSpeaker))
            let actions = driver.send(.outputDisconnected(reason: "gone"))
            #expect(actions.emitted == [Emitted(reason: .serverLost, message: "PipeWire is not available: gone", cause: nil)])
        }
    }
}
