import Testing
import SoundscapeCore

/// Failures and recovery, fades, routes and decode failures: the rest of `PlayerMachineTests`.
extension PlayerMachineTests {
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
        #expect(
            driver.send(.outputDisconnected(reason: "server gone"))
                == [.emit(.serverLost, message: "PipeWire is not available: server gone")])
        #expect(driver.machine.output == .unavailable)
        #expect(driver.status.state == .recovering)
        #expect(driver.status.wantsPlaying)
        // Desired state is untouched: nothing persisted on reconnect either.
        let reconnected = driver.send(.outputConnected, after: .seconds(2))
        // A return, not the user's start: it fades in promptly.
        #expect(
            reconnected == [
                .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout),
                .emit(.serverRestored, message: nil),
            ])
        #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        #expect(driver.status.state == .playing)
    }

    // MARK: Fades

    /// The user's play fades in gently until it is heard, however long that
    /// takes; every return after that fades in promptly, until the user plays again.
    @Test func aUsersStartFadesInGentlyAndEveryReturnPromptly() {
        var driver = D()
        driver.send(.play(D.rain))
        #expect(
            driver.send(.outputConnected, after: .seconds(1)).first == .startOutput(D.rain, D.half, .gentle),
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
        #expect(
            driver.send(.outputStalled, after: .seconds(4)) == [
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
        #expect(
            actions == [
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
        #expect(
            actions == [
                .persist(driver.desired(wantsPlaying: false, soundscape: D.ocean)),
                .emit(.decodeError, message: "damaged"),
            ])
    }

    @Test func decodeFailureWithoutFallbackStopsWithADecodeErrorEvent() {
        var driver = D.playing()
        let actions = driver.send(.decodeFailed(D.rain, message: "damaged", fallback: nil))
        #expect(
            actions == [
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
        #expect(
            driver.send(.decodeFailed(D.wind, message: "bad wind", fallback: D.ocean)) == [
                .emit(.decodeError, message: "bad wind")
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
