import Testing
@testable import SoundscapeCore

// The parts `PlayerMachine` is built from, each on its own. The machine's own
// tests (PlayerMachineTests, InterruptionPolicyTests) drive them together.

@Suite struct ReviveLadderTests {
    let origin = ContinuousClock.now

    @Test func climbsOneStepPerIntervalAndReportsTheLastStepFailingOnce() {
        var ladder = ReviveLadder(interval: .seconds(3))
        #expect(ladder.stalled(now: origin) == [.revive(.reactivate), .scheduleTick(at: origin + .seconds(3))])
        // A second stall report while working on the first is not a new stall.
        #expect(ladder.stalled(now: origin + .seconds(1)) == [])
        // Not due yet.
        #expect(ladder.tick(now: origin + .seconds(2)).actions == [])

        var now = origin + .seconds(3)
        var result = ladder.tick(now: now)
        #expect(result.actions == [.revive(.recreateStream), .scheduleTick(at: now + .seconds(3))])
        #expect(result.news == nil)
        now += .seconds(3)
        result = ladder.tick(now: now)
        #expect(result.actions == [.revive(.reconnect), .scheduleTick(at: now + .seconds(3))])
        #expect(result.news == nil)
        now += .seconds(3)
        result = ladder.tick(now: now)
        #expect(result.actions == [.revive(.reconnect), .scheduleTick(at: now + .seconds(3))], "the last step repeats")
        #expect(result.news?.reason == .resumeFailed)
        now += .seconds(3)
        #expect(ladder.tick(now: now).news == nil, "the failure is reported once per stall")
    }

    @Test func aFrozenServerIsWaitedForAndItsAnswerWithoutAudioStartsTheSteps() {
        var ladder = ReviveLadder(interval: .seconds(3))
        ladder.serverUnresponsive()
        #expect(ladder.state == .waitingForServer)
        #expect(ladder.isWorking)
        #expect(ladder.tick(now: origin + .seconds(60)).actions == [], "no step while the server does not answer")
        // It answers, but our stream still runs no cycle: now the steps begin.
        #expect(ladder.stalled(now: origin + .seconds(61)) == [.revive(.reactivate), .scheduleTick(at: origin + .seconds(64))])
    }

    @Test func aResetEndsTheStall() {
        var ladder = ReviveLadder(interval: .seconds(3))
        _ = ladder.stalled(now: origin)
        #expect(ladder.isWorking)
        ladder.reset()
        #expect(ladder.state == .idle)
        #expect(ladder.tick(now: origin + .seconds(10)).actions == [])
        #expect(ladder.stalled(now: origin + .seconds(10)).first == .revive(.reactivate))
    }
}

@Suite struct EventAnnouncerTests {
    static let quiet = EventAnnouncer.Situation(
        stalled: false, noUsableSink: false, serverUnavailable: false,
        disconnectReason: nil, interruption: nil)

    @Test func theFirstAudibleMomentIsStartedAndLaterOnesResumed() {
        var announcer = EventAnnouncer()
        #expect(announcer.publish(.playing, situation: Self.quiet, news: nil) == [.emit(.started, message: nil)])
        #expect(announcer.publish(.recovering, situation: Self.quiet, news: nil) == [.emit(.resumeFailed, message: nil)])
        #expect(announcer.publish(.playing, situation: Self.quiet, news: nil) == [.emit(.resumed, message: nil)])
        announcer.sessionBegins()
        _ = announcer.publish(.stopped, situation: Self.quiet, news: nil)
        #expect(announcer.publish(.playing, situation: Self.quiet, news: nil) == [.emit(.started, message: nil)])
    }

    @Test func aStallIsFollowedByRecoveredAndAServerLossByServerRestored() {
        var announcer = EventAnnouncer()
        _ = announcer.publish(.playing, situation: Self.quiet, news: nil)
        var stalled = Self.quiet
        stalled.stalled = true
        #expect(announcer.publish(.recovering, situation: stalled, news: nil) == [.emit(.stalled, message: nil)])
        #expect(announcer.pending == .recovery)
        #expect(announcer.publish(.playing, situation: Self.quiet, news: nil) == [.emit(.recovered, message: nil)])
        #expect(announcer.pending == .none)

        var lost = Self.quiet
        lost.serverUnavailable = true
        lost.disconnectReason = "gone"
        #expect(
            announcer.publish(.recovering, situation: lost, news: nil)
                == [.emit(.serverLost, message: "PipeWire is not available: gone")])
        #expect(announcer.serverConnected() == PlayerMachine.Announcement(.serverRestored))
        #expect(announcer.serverConnected() == nil, "the return is news once")
    }

    @Test func withoutATransitionTheInputsOwnNewsGoesOut() {
        var announcer = EventAnnouncer()
        let news = PlayerMachine.Announcement(.volumeChanged)
        #expect(announcer.publish(.stopped, situation: nil, news: news) == [.emit(.volumeChanged, message: nil)])
        // A start still settling (no state yet) publishes only the news too.
        #expect(announcer.publish(nil, situation: nil, news: nil) == [])
    }
}

@Suite struct InterruptionPolicyPartTests {
    let origin = ContinuousClock.now

    @Test func aMoveIsJudgedAgainstTheLastSinkNotTheGapBetween() {
        var policy = InterruptionPolicy(preferences: .default, serverPauseGrace: .seconds(1))
        policy.graphChanged(
            GraphFacts(
                sinks: [.init(name: "a", isCallRoute: false), .init(name: "b", isCallRoute: false)],
                defaultSink: "b", communicationStreams: []))
        #expect(policy.routeChanged(to: "a", wantsPlaying: true, now: origin) == nil, "the first link is not a change")
        #expect(policy.routeChanged(to: nil, wantsPlaying: true, now: origin) == nil)
        #expect(policy.link == .unlinked(last: "a"))
        let news = policy.routeChanged(to: "b", wantsPlaying: true, now: origin + .seconds(1))
        #expect(news == PlayerMachine.Announcement(.routeChanged, "a → b", cause: "newDefault"))
        #expect(policy.link == .linked(sink: "b", since: origin + .seconds(1)))
    }

    @Test func theServerPausingALinkedStreamCountsAfterTheGraceFromTheLaterOfLinkAndPause() {
        var policy = InterruptionPolicy(preferences: .default, serverPauseGrace: .seconds(1))
        _ = policy.routeChanged(to: "a", wantsPlaying: true, now: origin + .seconds(5))
        let paused = PlayerMachine.Output.active(soundscape: SoundscapeID("rain")!, streaming: false, since: origin)
        #expect(
            policy.causes(output: paused, sessionAudible: true, now: origin + .milliseconds(5500)).isEmpty,
            "linked half a second ago: a re-link, not a pause")
        #expect(policy.causes(output: paused, sessionAudible: true, now: origin + .seconds(6)) == [.serverPaused])
        #expect(
            policy.causes(output: paused, sessionAudible: false, now: origin + .seconds(6)).isEmpty,
            "a session never audible is starting, not paused")
    }
}
