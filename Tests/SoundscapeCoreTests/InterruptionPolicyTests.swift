import Foundation
import Testing
@testable import SoundscapeCore

// Interruptions (calls, call routes, the server pausing us) and routes (which
// sink we ask to be linked to, and why the route changed), driven through
// `PlayerMachine` with `MachineDriver`'s fake clock. Every machine test asserts
// the exact action list, as `PlayerMachineTests` does.
// The fixtures are in Support/InterruptionFixtures.swift; duck and ignore modes in
// InterruptionPolicyTests+Duck.swift, routes in InterruptionPolicyTests+Routes.swift.

@Suite struct InterruptionPolicyTests {
    typealias D = MachineDriver

    @Test func setUpHelperIssuesTheTargetAndNoEvent() {
        var driver = D.playing()
        #expect(driver.send(.graphChanged(Self.onSpeaker)) == [.setTarget(Self.speaker)])
        #expect(driver.send(.routeChanged(Self.speaker)) == [])
        #expect(
            driver.status
                == PlayerStatus(
                    state: .playing, isPlaying: true, soundscape: D.rain, volume: D.half,
                    route: Self.speaker, wantsPlaying: true))
    }
}

// MARK: - Calls in pause mode (the default)

extension InterruptionPolicyTests {
    @Suite struct CallsPause {
        typealias D = MachineDriver

        @Test func aCallPausesAndItsEndResumes() {
            var driver = D.playing()
            #expect(driver.machine.preferences == .default)
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            driver.send(.routeChanged(speaker))

            #expect(driver.send(.graphChanged(callOnSpeaker), after: .seconds(5)) == [.stopOutput, interruptedByCall])
            #expect(driver.status.state == .interrupted)
            #expect(driver.status.isPlaying == false)
            #expect(driver.status.wantsPlaying)
            #expect(driver.status.interruptions == ["communicationStream"])
            #expect(driver.status.ducked == false)
            // The user's wish survives the call: nothing persisted.
            #expect(driver.desired == driver.desired(wantsPlaying: true))
            // Repeated facts are not news.
            #expect(driver.send(.graphChanged(callOnSpeaker)) == [])

            #expect(driver.send(.outputStreaming(false), after: .milliseconds(300)) == [])
            #expect(driver.send(.outputStopped) == [])
            #expect(driver.machine.output == .idle)
            // A second call joining, and time passing, change nothing.
            #expect(driver.send(.graphChanged(facts([sink(speaker)], default: speaker, calls: [linphone, discord]))) == [])
            #expect(driver.send(.tick, after: .seconds(30)) == [])
            #expect(driver.status.state == .interrupted)

            let endedAt = driver.now + .seconds(60)
            #expect(
                driver.send(.graphChanged(onSpeaker), after: .seconds(60))
                    == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: endedAt + D.timeout)])
            #expect(driver.status.interruptions == [])
            #expect(driver.machine.isSettling(now: driver.now))
            #expect(driver.send(.graphChanged(onSpeaker)) == [])

            #expect(driver.send(.outputStreaming(true), after: .milliseconds(200)) == [.emit(.resumed, message: nil)])
            #expect(
                driver.status
                    == PlayerStatus(
                        state: .playing, isPlaying: true, soundscape: D.rain, volume: D.half,
                        route: speaker, wantsPlaying: true))
        }

        @Test func aCrashedCallAppIsJustNewFactsWithoutTheCall() {
            var driver = D.playingLinked()
            driver.send(.graphChanged(callOnSpeaker))
            #expect(driver.status.state == .interrupted)
            driver.finishFadeOut()
            // No "call ended" signal of any kind: the next facts simply lack the stream.
            let crashedAt = driver.now + .seconds(2)
            #expect(
                driver.send(.graphChanged(onSpeaker), after: .seconds(2))
                    == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: crashedAt + D.timeout)])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.state == .playing)
        }

        @Test func theCallEndingDuringTheFadeOutReversesIt() {
            var driver = D.playingLinked(graph: onSpeaker)
            #expect(driver.send(.graphChanged(callOnSpeaker)) == [.stopOutput, interruptedByCall])
            #expect(driver.machine.output == .stopping)
            // Neither outputStreaming(false) nor outputStopped has arrived: the stream still runs.
            let endedAt = driver.now + .milliseconds(100)
            #expect(
                driver.send(.graphChanged(onSpeaker), after: .milliseconds(100)) == [
                    .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: endedAt + D.timeout), .emit(.resumed, message: nil),
                ])
            #expect(driver.machine.output == .active(soundscape: D.rain, streaming: true, since: endedAt))
            #expect(driver.status.state == .playing)
            // The late end of the (reversed) fade-out undoes nothing.
            #expect(driver.send(.outputStopped) == [])
            #expect(driver.send(.outputStreaming(true)) == [])
            #expect(driver.status.state == .playing)
        }

        @Test func theCallEndingAfterTheStreamStoppedButBeforeTheFadeEndedWaitsForTheGraph() {
            var driver = D.playingLinked(graph: onSpeaker)
            driver.send(.graphChanged(callOnSpeaker))
            #expect(driver.send(.outputStreaming(false), after: .milliseconds(200)) == [])
            let endedAt = driver.now + .milliseconds(50)
            #expect(
                driver.send(.graphChanged(onSpeaker), after: .milliseconds(50))
                    == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: endedAt + D.timeout)])
            #expect(driver.send(.outputStopped) == [])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func repeatedIdenticalFactsWhilePlayingDoNothing() {
            var driver = D.playingLinked(graph: onSpeaker)
            for _ in 0..<3 {
                #expect(driver.send(.graphChanged(onSpeaker), after: .seconds(1)) == [])
            }
            #expect(driver.status.state == .playing)
            #expect(driver.status.interruptions == [])
        }

        @Test func playDuringACallWaitsForItsEnd() {
            var driver = D()
            driver.send(.outputConnected)
            #expect(driver.send(.graphChanged(callOnSpeaker)) == [.setTarget(speaker)])
            #expect(driver.send(.play(D.rain)) == [.persist(driver.desired(wantsPlaying: true)), interruptedByCall])
            #expect(driver.machine.output == .idle)
            #expect(driver.status.state == .interrupted)
            let endedAt = driver.now + .seconds(1)
            #expect(
                driver.send(.graphChanged(onSpeaker), after: .seconds(1))
                    == [.startOutput(D.rain, D.half, .gentle), .scheduleTick(at: endedAt + D.timeout)])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func stopDuringACallIsAPlainStopAndTheCallsEndChangesNothing() {
            var driver = D.playingLinked(graph: onSpeaker)
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            #expect(driver.send(.stop) == [.persist(driver.desired(wantsPlaying: false)), .emit(.stopped, message: nil)])
            #expect(driver.send(.graphChanged(onSpeaker)) == [])
            #expect(driver.status.state == .stopped)
        }

        @Test func volumeChangeDuringAPausingCallIsPersistedAndApplied() {
            var driver = D.playingLinked(graph: onSpeaker)
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            #expect(
                driver.send(.setVolume(volume(70))) == [
                    .persist(driver.desired(wantsPlaying: true, volume: volume(70))),
                    .setVolume(volume(70)),
                    .emit(.volumeChanged, message: nil),
                ])
            #expect(driver.send(.graphChanged(onSpeaker)).first == .startOutput(D.rain, volume(70), .prompt))
        }
    }
}

// MARK: - Call routes

extension InterruptionPolicyTests {
    @Suite struct CallRoutes {
        typealias D = MachineDriver

        @Test(arguments: Preferences.InterruptionMode.allCases)
        func aCallRouteDefaultPausesInEveryMode(mode: Preferences.InterruptionMode) {
            var driver = D.playingLinked(with: preferences(mode))
            #expect(driver.send(.graphChanged(headsetInCallProfile)) == [.stopOutput, interruptedByHeadset])
            #expect(driver.status.state == .interrupted)
            #expect(driver.status.interruptions == ["callRoute"])
            #expect(driver.status.ducked == false)
            #expect(driver.machine.desiredTarget() == nil)
            #expect(driver.send(.graphChanged(headsetInCallProfile)) == [])
            driver.finishFadeOut()

            let backAt = driver.now + .seconds(30)
            #expect(
                driver.send(.graphChanged(facts([sink(speaker), sink(headset)], default: speaker)), after: .seconds(30))
                    == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: backAt + D.timeout)])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.state == .playing)
        }

        @Test(arguments: Preferences.InterruptionMode.allCases)
        func aBluetoothCallIsACallRouteInterruptionInEveryMode(mode: Preferences.InterruptionMode) {
            var driver = D.playingLinked(with: preferences(mode))
            let call = facts([sink(speaker), sink(headset, callRoute: true)], default: headset, calls: [linphone])
            #expect(driver.send(.graphChanged(call)) == [.stopOutput, interruptedByHeadset])
            #expect(driver.status.interruptions == ["communicationStream", "callRoute"])
            #expect(driver.status.ducked == false)
            driver.finishFadeOut()
            #expect(
                driver.send(.graphChanged(facts([sink(speaker), sink(headset)], default: headset))) == [
                    .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout), .setTarget(headset),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func ourRouteBeingACallRouteCounts() {
            // The default is a normal sink, but the sink we are linked to is a call route.
            var driver = D.playingLinked(graph: facts([sink(speaker), sink(headset, callRoute: true)], default: speaker))
            let actions = driver.send(.routeChanged(headset))
            #expect(actions.first == .stopOutput)
            #expect(actions.emitted.map(\.reason) == [.interrupted])
            #expect(actions.emitted.map(\.cause) == ["callRoute"])
            #expect(actions.count == 2)
            #expect(driver.status.state == .interrupted)
            #expect(driver.status.interruptions == ["callRoute"])
            driver.finishFadeOut()

            // Linked back to the speaker (the target we asked for): playing again.
            let actionsBack = driver.send(.routeChanged(speaker))
            #expect(
                actionsBack == [
                    .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout),
                    .emit(.routeChanged, message: "\(headset) → \(speaker)", cause: "newDefault"),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test
        func ourRouteBeingACallRouteIsDescribedByItsName() {
            // Pinned to the headset, which switches to its call profile under the same node.name.
            var driver = D.playingLinked(
                with: preferences(pinnedSink: headset),
                graph: facts([sink(speaker), sink(headset)], default: speaker), route: headset)
            let actions = driver.send(.graphChanged(facts([sink(speaker), sink(headset, callRoute: true)], default: speaker)))
            #expect(actions.emitted.map(\.cause) == ["callRoute"])
            let message = actions.emitted.first?.message ?? ""
            #expect(message != "the default output is a call route (\(speaker))")
            #expect(message.contains(headset))
        }

        @Test func aPinnedSinkTurningIntoACallRouteIsNoLongerTheTarget() {
            var driver = D.playingLinked(
                with: preferences(pinnedSink: headset),
                graph: facts([sink(speaker), sink(headset)], default: speaker), route: headset)
            #expect(driver.machine.desiredTarget() == headset)
            let actions = driver.send(.graphChanged(facts([sink(speaker), sink(headset, callRoute: true)], default: speaker)))
            #expect(Array(actions.prefix(2)) == [.stopOutput, .setTarget(speaker)])
            #expect(driver.status.interruptions == ["callRoute"])
        }
    }
}

// MARK: - Auto-resume

extension InterruptionPolicyTests {
    @Suite struct AutoResume {
        typealias D = MachineDriver

        static let interruptions: [(name: String, during: GraphFacts, after: GraphFacts)] = [
            ("call", callOnSpeaker, onSpeaker),
            ("call route", headsetInCallProfile, facts([sink(speaker), sink(headset)], default: speaker)),
        ]

        /// Auto-resume off leaves the session paused, not ended: the signer host keeps
        /// running, and the user's play (a media key) brings the sound back.
        @Test(arguments: 0..<2)
        func offStaysPausedWhenAPausingInterruptionEnds(index: Int) {
            let (_, during, after) = Self.interruptions[index]
            var driver = D.playingLinked(with: preferences(autoResume: false))
            #expect(driver.send(.graphChanged(during)).first == .stopOutput)
            driver.finishFadeOut()
            let paused = DesiredState(intent: .paused, soundscape: D.rain, volume: D.half)
            #expect(
                driver.send(.graphChanged(after)) == [
                    .persist(paused),
                    .emit(.paused, message: "the interruption ended; auto-resume is off"),
                ])
            #expect(driver.desired == paused)
            #expect(
                driver.status
                    == PlayerStatus(
                        state: .paused, isPlaying: false, soundscape: D.rain, volume: D.half,
                        route: speaker, wantsPlaying: false))
            #expect(driver.send(.graphChanged(after)) == [])
            // The next play resumes the session.
            #expect(
                driver.send(.play(D.rain)) == [
                    .persist(driver.desired(wantsPlaying: true)), .startOutput(D.rain, D.half, .gentle),
                    .scheduleTick(at: driver.now + D.timeout),
                ])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func offStaysPausedWhenTheCallEndsDuringTheFadeOut() {
            var driver = D.playingLinked(with: preferences(autoResume: false))
            driver.send(.graphChanged(callOnSpeaker))
            #expect(
                driver.send(.graphChanged(onSpeaker)) == [
                    .persist(DesiredState(intent: .paused, soundscape: D.rain, volume: D.half)),
                    .emit(.paused, message: "the interruption ended; auto-resume is off"),
                ])
            #expect(driver.machine.output == .stopping)
        }

        @Test(arguments: 0..<2)
        func onResumes(index: Int) {
            let (_, during, after) = Self.interruptions[index]
            var driver = D.playingLinked(with: preferences(autoResume: true))
            driver.send(.graphChanged(during))
            driver.finishFadeOut()
            #expect(driver.send(.graphChanged(after)) == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout)])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.desired.wantsPlaying)
        }

        @Test
        func offSurvivesLosingTheServerDuringACall() {
            var driver = D.playingLinked(with: preferences(autoResume: false))
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            #expect(
                driver.send(.outputDisconnected(reason: "gone"))
                    == [.emit(.serverLost, message: "PipeWire is not available: gone")])
            #expect(driver.desired.wantsPlaying)
        }

        @Test
        func offSwitchingToDuckDuringACallDucks() {
            var driver = D.playingLinked(with: preferences(autoResume: false))
            driver.send(.graphChanged(callOnSpeaker))
            driver.finishFadeOut()
            let duck = preferences(.duck, autoResume: false)
            let actions = driver.send(.setPreferences(duck))
            #expect(driver.desired.wantsPlaying)
            #expect(
                actions == [
                    .persistPreferences(duck),
                    .setVolume(volume(15)),
                    .startOutput(D.rain, volume(15), .prompt),
                    .scheduleTick(at: driver.now + D.timeout),
                    .emit(.interrupted, message: "ducked to 30% for a call", cause: "communicationStream"),
                ])
        }
    }
}

// MARK: - The server pausing us

extension InterruptionPolicyTests {
    @Suite struct ServerPaused {
        typealias D = MachineDriver

        @Test(arguments: [true, false])
        func aLinkedStreamHeldPausedBeyondTheGraceIsServerPaused(autoResume: Bool) {
            var driver = D.playingLinked(with: preferences(autoResume: autoResume))
            let pausedAt = driver.now + .seconds(5)
            #expect(
                driver.send(.outputStreaming(false), after: .seconds(5))
                    == [.scheduleTick(at: pausedAt + .seconds(1)), .scheduleTick(at: pausedAt + D.timeout)])
            // Within the grace period it may be a re-link: the last announced state stands.
            #expect(driver.status.state == .playing)
            #expect(driver.status.interruptions == [])
            #expect(driver.send(.tick, after: .milliseconds(999)) == [])
            #expect(
                driver.send(.tick, after: .milliseconds(1))
                    == [.emit(.interrupted, message: "the server paused our stream", cause: "serverPaused")])
            var expected = PlayerStatus(
                state: .interrupted, isPlaying: false, soundscape: D.rain, volume: D.half,
                route: speaker, wantsPlaying: true)
            expected.interruptions = ["serverPaused"]
            #expect(driver.status == expected)
            // The start deadline passes: still the server's pause, not a failure; and nothing was stopped.
            #expect(driver.send(.tick, after: .seconds(2)) == [])
            #expect(driver.send(.tick, after: .seconds(60)) == [])
            #expect(driver.desired == driver.desired(wantsPlaying: true))
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.state == .playing)
            #expect(driver.status.interruptions == [])
        }

        @Test func aShortPauseIsARelink() {
            var driver = D.playing()
            driver.send(.outputStreaming(false))
            #expect(driver.send(.outputStreaming(true), after: .milliseconds(500)) == [])
            #expect(driver.send(.tick, after: .milliseconds(500)) == [])
            #expect(driver.send(.tick, after: .seconds(2)) == [])
            #expect(driver.status.state == .playing)
        }

        @Test func withoutARouteItWaitsAndThenReportsResumeFailed() {
            var driver = D.playingLinked(route: nil)
            let pausedAt = driver.now + .seconds(5)
            #expect(driver.send(.outputStreaming(false), after: .seconds(5)) == [.scheduleTick(at: pausedAt + D.timeout)])
            #expect(driver.send(.tick, after: .seconds(1)) == [])
            #expect(driver.status.interruptions == [])
            #expect(driver.send(.tick, after: .seconds(2)) == [.emit(.resumeFailed, message: nil)])
            #expect(driver.status.state == .recovering)
            #expect(driver.status.interruptions == [])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func withoutARouteAndWithoutASinkItIsRouteChangeFailed() {
            var driver = D.playingLinked(route: nil)
            #expect(
                driver.send(.graphChanged(facts([], default: nil)))
                    == [.emit(.routeChangeFailed, message: "no sink to play to; waiting for one")])
            let pausedAt = driver.now + .milliseconds(20)
            #expect(driver.send(.outputStreaming(false), after: .milliseconds(20)) == [.scheduleTick(at: pausedAt + D.timeout)])
            #expect(driver.send(.tick, after: .seconds(1)) == [])
            #expect(driver.send(.tick, after: .seconds(2)) == [])
            #expect(driver.status.state == .recovering)
            #expect(driver.status.interruptions == [])
        }

        @Test func aStartThatNeverPlayedIsNotServerPaused() {
            var driver = D()
            driver.send(.outputConnected)
            driver.send(.graphChanged(onSpeaker))
            driver.send(.play(D.rain))
            #expect(driver.send(.routeChanged(speaker)) == [])
            #expect(driver.send(.tick, after: .seconds(1)) == [])
            #expect(driver.status.interruptions == [])
            #expect(driver.send(.tick, after: .seconds(2)) == [.emit(.resumeFailed, message: nil)])
        }
    }
}
