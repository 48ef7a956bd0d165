import Testing
import SoundscapeCore

/// Drives a `PlayerMachine` with a fake clock: one real instant as the origin,
/// then only durations added to it.
struct MachineDriver {
    static let rain = SoundscapeID("rain")!
    static let ocean = SoundscapeID("ocean-waves")!
    static let wind = SoundscapeID("wind")!
    static let half = Volume(percent: 50)!
    static let timeout = Duration.seconds(3)

    var machine: PlayerMachine
    let origin: ContinuousClock.Instant
    private(set) var now: ContinuousClock.Instant

    init(wantsPlaying: Bool = false, soundscape: SoundscapeID = rain, volume: Volume = half,
         origin: ContinuousClock.Instant = ContinuousClock.now) {
        machine = PlayerMachine(
            desired: DesiredState(wantsPlaying: wantsPlaying, soundscape: soundscape, volume: volume),
            configuration: .init(startTimeout: Self.timeout))
        self.origin = origin
        now = origin
    }

    /// Advances the fake clock by `elapsed`, then feeds `input`.
    @discardableResult
    mutating func send(_ input: PlayerMachine.Input, after elapsed: Duration = .zero) -> [PlayerMachine.Action] {
        now = now + elapsed
        return machine.handle(input, now: now)
    }

    var status: PlayerStatus { machine.status(now: now) }
    var desired: DesiredState { machine.desired }

    func desired(wantsPlaying: Bool, soundscape: SoundscapeID = rain, volume: Volume = half) -> DesiredState {
        DesiredState(wantsPlaying: wantsPlaying, soundscape: soundscape, volume: volume)
    }

    /// Connected, playing `rain` and streaming, with the `started` event already out.
    static func playing(soundscape: SoundscapeID = rain) -> MachineDriver {
        var driver = MachineDriver(soundscape: soundscape)
        driver.send(.outputConnected)
        driver.send(.play(soundscape))
        driver.send(.outputStreaming(true), after: .milliseconds(100))
        precondition(driver.status.state == .playing)
        return driver
    }
}

extension [PlayerMachine.Action] {
    var emits: [EventReason] {
        compactMap { if case .emit(let reason, _, _) = $0 { reason } else { nil } }
    }

    var startsOutput: Bool {
        contains { if case .startOutput = $0 { true } else { false } }
    }
}

@Suite struct PlayerMachineTests {
    typealias D = MachineDriver

    // MARK: Starting

    @Test func firstPlayStartsOutputAndPersistsButAnnouncesOnlyOnceStreaming() {
        var driver = D()
        #expect(driver.send(.outputConnected) == [])
        #expect(driver.status.state == .stopped)

        let start = driver.now
        let actions = driver.send(.play(D.rain))
        #expect(actions == [
            .persist(driver.desired(wantsPlaying: true)),
            .startOutput(D.rain, D.half, .gentle),
            .scheduleTick(at: start + D.timeout),
        ])
        #expect(driver.machine.isSettling(now: driver.now))
        // Still settling: the status does not announce a transient.
        #expect(driver.status == PlayerStatus(state: .stopped, isPlaying: false, soundscape: D.rain,
                                              volume: D.half, route: nil, wantsPlaying: true))

        // A tick inside the grace period changes nothing.
        #expect(driver.send(.tick, after: .seconds(1)) == [])

        #expect(driver.send(.outputStreaming(true), after: .milliseconds(500)) == [.emit(.started, message: nil)])
        #expect(!driver.machine.isSettling(now: driver.now))
        #expect(driver.status == PlayerStatus(state: .playing, isPlaying: true, soundscape: D.rain,
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
        #expect(driver.send(.outputConnected, after: .seconds(1)) == [
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
        #expect(driver.send(.stop) == [
            .persist(driver.desired(wantsPlaying: false)), .stopOutput, .emit(.stopped, message: nil),
        ])
        #expect(driver.machine.output == .stopping)
        #expect(driver.status == PlayerStatus(state: .stopped, isPlaying: false, soundscape: D.rain,
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
        #expect(actions == [
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
        #expect(actions == [
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
        #expect(driver.status == PlayerStatus(state: .paused, isPlaying: false, soundscape: D.rain,
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
        #expect(driver.send(.play(D.rain), after: .seconds(5)) == [
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
        driver.machine = PlayerMachine(desired: DesiredState(intent: .paused, soundscape: D.wind, volume: D.half),
                                       configuration: .init(startTimeout: D.timeout))
        #expect(driver.status.state == .paused)
        #expect(driver.send(.outputConnected) == [.emit(.paused, message: nil)])
        #expect(driver.machine.output == .idle)
    }

    @Test func anInterruptionDuringAPauseIsNotNews() {
        var driver = D.playing()
        driver.send(.pause)
        let call = GraphFacts(sinks: [.init(name: "speaker", isCallRoute: false)], defaultSink: "speaker",
                              communicationStreams: ["Linphone"])
        #expect(driver.send(.graphChanged(call)).emits == [])
        #expect(driver.status.state == .paused)
    }

    // MARK: Volume and soundscape

    @Test func volumeChangeSetsPersistsAndAnnounces() {
        var driver = D.playing()
        let seventy = Volume(percent: 70)!
        #expect(driver.send(.setVolume(seventy)) == [
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
        #expect(actions == [
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
        #expect(actions == [
            .persist(driver.desired(wantsPlaying: true, soundscape: D.ocean)),
            .startOutput(D.ocean, D.half, .gentle),
            .scheduleTick(at: driver.now + D.timeout),
        ])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
    }

    // MARK: Failures and recovery

    @Test func startTimeoutReportsResumeFailedThenResumed() {
        var driver = D()
        driver.send(.outputConnected)
        driver.send(.play(D.rain))
        #expect(driver.send(.tick, after: .milliseconds(2999)) == [])
        #expect(driver.machine.isSettling(now: driver.now))
        #expect(driver.send(.tick, after: .milliseconds(1)) == [.emit(.resumeFailed, message: nil)])
        #expect(driver.status.state == .recovering)
        #expect(driver.status.isPlaying == false)
        #expect(driver.send(.tick, after: .seconds(5)) == [])
        // Never audible yet in this session: its first sound is the start.
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
        #expect(driver.status.state == .playing)
    }

    @Test func streamingStopsWhilePlayingThenTimeoutMeansRecovering() {
        var driver = D.playing()
        let stalledAt = driver.now + .seconds(10)
        #expect(driver.send(.outputStreaming(false), after: .seconds(10)) == [.scheduleTick(at: stalledAt + D.timeout)])
        // Within the grace period the last announced state stands.
        #expect(driver.status.state == .playing)
        #expect(driver.status.isPlaying)
        #expect(driver.send(.tick, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(2)) == [.emit(.resumeFailed, message: nil)])
        #expect(driver.status.state == .recovering)
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
    }

    @Test func shortStreamingHiccupIsNotAnnounced() {
        var driver = D.playing()
        driver.send(.outputStreaming(false))
        #expect(driver.send(.outputStreaming(true), after: .milliseconds(500)) == [])
        // The old deadline passes harmlessly.
        #expect(driver.send(.tick, after: .seconds(3)) == [])
        #expect(driver.status.state == .playing)
    }

    @Test func losingTheServerWhilePlayingIsRecoveringAndResumesAfterReconnect() {
        var driver = D.playing()
        #expect(driver.send(.outputDisconnected(reason: "server gone"))
                == [.emit(.serverLost, message: "PipeWire is not available: server gone")])
        #expect(driver.machine.output == .unavailable)
        #expect(driver.status.state == .recovering)
        #expect(driver.status.wantsPlaying)
        // Desired state is untouched: nothing persisted on reconnect either.
        let reconnected = driver.send(.outputConnected, after: .seconds(2))
        // A return, not the user's start: it fades in promptly.
        #expect(reconnected == [.startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout),
                                .emit(.serverRestored, message: nil)])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        #expect(driver.status.state == .playing)
    }

    // MARK: Fades

    /// The user's play fades in gently until it is heard, however long that
    /// takes; every return after that fades in promptly, until the user plays again.
    @Test func aUsersStartFadesInGentlyAndEveryReturnPromptly() {
        var driver = D()
        driver.send(.play(D.rain))
        #expect(driver.send(.outputConnected, after: .seconds(1)).first == .startOutput(D.rain, D.half, .gentle),
                "the user's play, not heard yet, waited for the server")
        driver.send(.outputStreaming(true))
        driver.send(.outputDisconnected(reason: "server gone"))
        #expect(driver.send(.outputConnected, after: .seconds(1)).first == .startOutput(D.rain, D.half, .prompt))
        driver.send(.outputStreaming(true))
        driver.send(.pause)
        driver.send(.outputStreaming(false))
        driver.send(.outputStopped)
        #expect(driver.send(.play(D.rain)).contains(.startOutput(D.rain, D.half, .gentle)))
    }

    /// At start-up the daemon cannot tell a login from a restart after a crash,
    /// so a restored session comes back as a return.
    @Test func aSessionRestoredAtStartUpFadesInPromptly() {
        var driver = D(wantsPlaying: true)
        #expect(driver.send(.outputConnected).first == .startOutput(D.rain, D.half, .prompt))
    }

    @Test func losingTheServerWhileStoppedIsSilent() {
        var driver = D()
        driver.send(.outputConnected)
        #expect(driver.send(.outputDisconnected(reason: "gone")) == [])
        #expect(driver.status.state == .stopped)
    }

    @Test func aServerThatDoesNotAnswerIsWaitedForNotRevived() {
        var driver = D.playing()
        let actions = driver.send(.outputServerUnresponsive, after: .seconds(3))
        #expect(actions == [.emit(.stalled, message: "PipeWire does not answer; waiting for it")])
        #expect(driver.status.state == .recovering)
        // Time passes: no step is taken against a frozen server.
        #expect(driver.send(.tick, after: .seconds(10)) == [])
        // It resumes and so do our cycles: recovered, nothing was torn down.
        #expect(driver.send(.outputFlowing, after: .seconds(5)) == [.emit(.recovered, message: nil)])
        #expect(driver.status.state == .playing)
    }

    @Test func aServerThatAnswersAgainWithoutAudioStartsTheWatchdogSteps() {
        var driver = D.playing()
        driver.send(.outputServerUnresponsive)
        let stalledAt = driver.now + .seconds(4)
        #expect(driver.send(.outputStalled, after: .seconds(4)) == [
            .revive(.reactivate), .scheduleTick(at: stalledAt + .seconds(3)),
        ])
    }

    // MARK: Route

    @Test func routeChangeWhilePlayingIsAnnouncedButTheFirstRouteIsNot() {
        var driver = D()
        driver.send(.outputConnected)
        driver.send(.play(D.rain))
        #expect(driver.send(.routeChanged("sink-a")) == [])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
        #expect(driver.status.route == "sink-a")
        #expect(driver.send(.routeChanged("sink-a")) == [])
        // Without graph facts the cause cannot be a vanished device: it was a new default.
        #expect(driver.send(.routeChanged("sink-b")) == [.emit(.routeChanged, message: "sink-a → sink-b", cause: "newDefault")])
        #expect(driver.status.route == "sink-b")
        // Losing the link is not a route change (nil is not a sink)…
        #expect(driver.send(.routeChanged(nil)) == [])
        #expect(driver.status.route == nil)
        // …but where we land afterwards is judged against where we were: a move unlinks first.
        #expect(driver.send(.routeChanged("sink-a")) == [.emit(.routeChanged, message: "sink-b → sink-a", cause: "newDefault")])
        #expect(driver.send(.routeChanged(nil)) == [])
        #expect(driver.send(.routeChanged("sink-a")) == [], "relinked to the same sink: no change")
    }

    @Test func routeChangeWhileStoppedIsNotAnnounced() {
        var driver = D()
        driver.send(.routeChanged("sink-a"))
        #expect(driver.send(.routeChanged("sink-b")) == [])
        #expect(driver.status.route == "sink-b")
    }

    // MARK: Decode failures

    @Test func decodeFailureOfTheCurrentSoundscapeFallsBack() {
        var driver = D.playing()
        let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: D.ocean))
        #expect(actions == [
            .persist(driver.desired(wantsPlaying: true, soundscape: D.ocean)),
            .switchSoundscape(D.ocean, D.half),
            .emit(.decodeError, message: "damaged"),
        ])
        #expect(driver.desired.soundscape == D.ocean)
        #expect(driver.status.state == .playing)
    }

    @Test func decodeFailureWhileStoppedSwitchesTheDesiredSoundscapeOnly() {
        var driver = D()
        driver.send(.outputConnected)
        let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: D.ocean))
        #expect(actions == [
            .persist(driver.desired(wantsPlaying: false, soundscape: D.ocean)),
            .emit(.decodeError, message: "damaged"),
        ])
    }

    @Test func decodeFailureWithoutFallbackStopsWithADecodeErrorEvent() {
        var driver = D.playing()
        let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: nil))
        #expect(actions == [
            .persist(driver.desired(wantsPlaying: false)),
            .stopOutput,
            .emit(.decodeError, message: "damaged"),
        ])
        #expect(driver.status.state == .stopped)
        #expect(driver.status.wantsPlaying == false)
    }

    @Test func decodeFailureFallingBackToItselfStops() {
        var driver = D.playing()
        let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: D.rain))
        #expect(actions.contains(.stopOutput))
        #expect(driver.desired.wantsPlaying == false)
        #expect(actions.emits == [.decodeError])
    }

    @Test func decodeFailureOfAnotherSoundscapeOnlyAnnounces() {
        var driver = D.playing()
        #expect(driver.send(.decodeFailed(D.wind, message: "bad wind", fallback: D.ocean)) == [
            .emit(.decodeError, message: "bad wind"),
        ])
        #expect(driver.desired == driver.desired(wantsPlaying: true))
    }

    @Test
    func decodeFailureWhileStoppedWithoutUsableFallbackPersistsNothing() {
        for fallback in [nil, D.rain] {
            var driver = D()
            let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: fallback))
            #expect(driver.desired == driver.desired(wantsPlaying: false))
            #expect(actions == [.emit(.decodeError, message: "damaged")])
        }
    }
}

/// Long seeded pseudo-random runs of inputs, checking invariants after every step.
@Suite struct PlayerMachinePropertyTests {
    typealias D = MachineDriver

    static let ids = [D.rain, D.ocean, D.wind]
    static let volumes = [0, 30, 50, 100].map { Volume(percent: $0)! }

    static func randomInput(using generator: inout SplitMix64) -> PlayerMachine.Input {
        func id() -> SoundscapeID { ids.randomElement(using: &generator)! }
        switch Int.random(in: 0..<13, using: &generator) {
        case 0, 1: return .play(id())
        case 2: return .stop
        case 3: return .setVolume(volumes.randomElement(using: &generator)!)
        case 4: return .outputConnected
        case 5: return .outputDisconnected(reason: "lost")
        case 6, 7: return .outputStreaming(Bool.random(using: &generator))
        case 8: return .outputStopped
        case 9: return .routeChanged([nil, "sink-a", "sink-b"].randomElement(using: &generator)!)
        case 10:
            let fallback: SoundscapeID? = Bool.random(using: &generator) ? id() : nil
            return .decodeFailed(id(), message: "bad", fallback: fallback)
        default: return .tick
        }
    }

    static func randomDelay(using generator: inout SplitMix64) -> Duration {
        .milliseconds([0, 10, 500, 1500, 2999, 3000, 4000].randomElement(using: &generator)!)
    }

    /// Runs `steps` random inputs and returns every invariant violation found, described.
    static func violations(seed: UInt64, steps: Int,
                           check: (_ before: DesiredState, _ input: PlayerMachine.Input,
                                   _ actions: [PlayerMachine.Action], _ driver: MachineDriver) -> String?) -> [String] {
        var generator = SplitMix64(seed: seed)
        var driver = D(wantsPlaying: Bool.random(using: &generator))
        var found: [String] = []
        for step in 0..<steps {
            let before = driver.desired
            let input = randomInput(using: &generator)
            let actions = driver.send(input, after: randomDelay(using: &generator))
            if let problem = check(before, input, actions, driver) {
                found.append("seed \(seed) step \(step): \(input) → \(actions): \(problem)")
            }
        }
        return found
    }

    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 0xDEADBEEF]

    @Test(arguments: seeds)
    func invariantsHoldAfterEveryInput(seed: UInt64) {
        let found = Self.violations(seed: seed, steps: 4000) { before, _, actions, driver in
            let persists = actions.compactMap { if case .persist(let state) = $0 { state } else { nil } }
            let status = driver.status
            if actions.emits.count > 1 { return "more than one event" }
            if before != driver.desired, persists != [driver.desired] {
                return "desired changed but was not persisted exactly once with the new value"
            }
            if persists.contains(where: { $0 != driver.desired }) { return "persisted a stale state" }
            if !driver.desired.wantsPlaying, actions.startsOutput { return "started while not wanting to play" }
            if actions.contains(where: { if case .startOutput(let id, let volume, _) = $0 {
                id != driver.desired.soundscape || volume != driver.desired.volume } else { false } }) {
                return "started something other than the desired soundscape/volume"
            }
            let deadlines = [driver.now + D.timeout, driver.now + driver.machine.configuration.serverPauseGrace]
            if actions.contains(where: { if case .scheduleTick(let at) = $0 { !deadlines.contains(at) } else { false } }) {
                return "tick not scheduled at now + startTimeout or now + serverPauseGrace"
            }
            if status.isPlaying != (status.state == .playing) { return "isPlaying disagrees with state" }
            if !status.wantsPlaying, status.state != .stopped { return "not wanting to play but \(status.state)" }
            if status.wantsPlaying != driver.desired.wantsPlaying || status.soundscape != driver.desired.soundscape
                || status.volume != driver.desired.volume {
                return "status does not reflect desired"
            }
            return nil
        }
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test(arguments: seeds)
    func persistAppearsOnlyWhenDesiredChanged(seed: UInt64) {
        let found = Self.violations(seed: seed, steps: 4000) { before, _, actions, driver in
            let persisted = actions.contains { if case .persist = $0 { true } else { false } }
            return persisted && before == driver.desired ? "persisted an unchanged state" : nil
        }
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test func theRandomRunsExerciseEveryState() {
        // Guards the property tests against a generator that never reaches the interesting states.
        var generator = SplitMix64(seed: 1)
        var driver = D()
        var seen = Set<PlayerState>()
        var reasons = Set<EventReason>()
        for _ in 0..<4000 {
            let actions = driver.send(Self.randomInput(using: &generator), after: Self.randomDelay(using: &generator))
            seen.insert(driver.status.state)
            reasons.formUnion(actions.emits)
        }
        #expect(seen == [.stopped, .playing, .recovering, .interrupted])
        #expect(reasons.isSuperset(of: [.started, .stopped, .resumed, .resumeFailed, .routeChanged,
                                        .decodeError, .volumeChanged, .soundscapeChanged]))
    }
}
