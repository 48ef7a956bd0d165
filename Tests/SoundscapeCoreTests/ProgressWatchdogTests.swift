import Testing
@testable import SoundscapeCore

/// The output's progress watchdog on its own: each test replays what the
/// output's timers and the server would report, in virtual time.
@Suite struct ProgressWatchdogTests {
    let origin = ContinuousClock.now
    let grace = Duration.seconds(3)
    let recheck = Duration.milliseconds(500)

    /// A watchdog watching an active stream since `origin`.
    func watching() -> ProgressWatchdog {
        var watchdog = ProgressWatchdog(grace: grace, recheck: recheck)
        #expect(watchdog.start(now: origin) == [.armDeadline(at: origin + grace)])
        #expect(watchdog.state == .flowing)
        return watchdog
    }

    @Test func anInactiveStreamIsNotWatched() {
        var watchdog = ProgressWatchdog(grace: grace, recheck: recheck)
        #expect(watchdog.deadlinePassed(cyclesRan: false, now: origin + grace) == [], "a stale deadline finds nothing to do")
        #expect(watchdog.refilled(now: origin) == [])
        #expect(watchdog.cycleRan(now: origin) == [])
        #expect(watchdog.state == .idle)
    }

    @Test func refillsMoveTheDeadlineOnlyWhileCyclesRun() {
        var watchdog = watching()
        let now = origin + .seconds(1)
        #expect(watchdog.refilled(now: now) == [.armDeadline(at: now + grace)])
        _ = watchdog.deadlinePassed(cyclesRan: false, now: origin + grace)
        #expect(watchdog.refilled(now: origin + .seconds(4)) == [], "while stalled the deadline is the watchdog's")
    }

    @Test func aDeadlineAfterALateCycleLooksAgainShortly() {
        var watchdog = watching()
        let now = origin + grace
        #expect(watchdog.deadlinePassed(cyclesRan: true, now: now) == [.armDeadline(at: now + recheck)])
        #expect(watchdog.state == .flowing, "a cycle ran since the push: not a stall")
    }

    @Test func aStallWhileTheServerAnswersIsReportedOnce() {
        var watchdog = watching()
        var now = origin + grace
        #expect(
            watchdog.deadlinePassed(cyclesRan: false, now: now)
                == [.probeServer(answerDue: now + recheck), .watchForCycle])
        #expect(!watchdog.hasReported, "nothing said yet: the server may only be slow to answer")
        watchdog.probeSent(sequence: 7)
        #expect(watchdog.serverAnswered(sequence: 6, now: now) == [], "someone else's sync")
        now += .milliseconds(12)
        #expect(watchdog.serverAnswered(sequence: 7, now: now) == [.cancelProbe, .report(.stalled)])
        #expect(watchdog.state == .stuck)
        #expect(watchdog.answerDeadlinePassed(now: now + recheck) == [], "the answer came: its timer is stale")
        #expect(watchdog.deadlinePassed(cyclesRan: false, now: now + grace) == [.watchForCycle], "stuck is said once")

        now += .seconds(5)
        #expect(watchdog.cycleRan(now: now) == [.cancelProbe, .report(.flowing), .armDeadline(at: now + grace)])
        #expect(watchdog.state == .flowing)
        #expect(watchdog.cycleRan(now: now) == [], "flowing already")
    }

    @Test func aServerThatDoesNotAnswerIsWaitedForThenGetsTimeToRunItsCycles() {
        var watchdog = watching()
        var now = origin + grace
        _ = watchdog.deadlinePassed(cyclesRan: false, now: now)
        watchdog.probeSent(sequence: 3)
        #expect(watchdog.answerDeadlinePassed(now: now + .milliseconds(499)) == [], "early: not due yet")
        now += recheck
        #expect(watchdog.answerDeadlinePassed(now: now) == [.report(.serverUnresponsive)])
        #expect(watchdog.answerDeadlinePassed(now: now + .seconds(1)) == [], "reported once")
        #expect(watchdog.hasReported)

        // The server resumes (SIGCONT): its answer is not yet a stall of ours.
        now += .seconds(4)
        #expect(watchdog.serverAnswered(sequence: 3, now: now) == [.cancelProbe, .armDeadline(at: now + recheck)])
        #expect(watchdog.state == .serverBack)
        // And its cycles come back: audio flows, which is news after the report.
        #expect(
            watchdog.cycleRan(now: now + .milliseconds(40))
                == [.cancelProbe, .report(.flowing), .armDeadline(at: now + .milliseconds(40) + grace)])
    }

    @Test func aServerBackWithoutCyclesIsAStall() {
        var watchdog = watching()
        var now = origin + grace
        _ = watchdog.deadlinePassed(cyclesRan: false, now: now)
        watchdog.probeSent(sequence: 1)
        now += recheck
        _ = watchdog.answerDeadlinePassed(now: now)
        _ = watchdog.serverAnswered(sequence: 1, now: now + .seconds(2))
        now += .seconds(2) + recheck
        #expect(watchdog.deadlinePassed(cyclesRan: false, now: now) == [.report(.stalled), .watchForCycle])
        #expect(watchdog.state == .stuck)
    }

    @Test func stoppingEndsAReportedStallWithItsNewsAndADroppedConnectionWithout() {
        var stopped = watching()
        _ = stopped.deadlinePassed(cyclesRan: false, now: origin + grace)
        stopped.probeSent(sequence: 1)
        #expect(stopped.stop() == [.disarmDeadline, .cancelProbe], "nothing was reported, so nothing to take back")
        #expect(stopped.state == .idle)

        var stuck = watching()
        _ = stuck.deadlinePassed(cyclesRan: false, now: origin + grace)
        stuck.probeSent(sequence: 1)
        _ = stuck.serverAnswered(sequence: 1, now: origin + grace)
        #expect(stuck.stop() == [.disarmDeadline, .cancelProbe, .report(.flowing)])

        var dropped = watching()
        _ = dropped.deadlinePassed(cyclesRan: false, now: origin + grace)
        dropped.probeSent(sequence: 1)
        _ = dropped.serverAnswered(sequence: 1, now: origin + grace)
        #expect(dropped.connectionDropped() == [.disarmDeadline, .cancelProbe], "the disconnect is the news")
        #expect(dropped.serverAnswered(sequence: 1, now: origin + grace) == [], "an echo from the old connection")
    }

    @Test func restartingAStuckStreamKeepsTheStallUntilACycleRuns() {
        var watchdog = watching()
        _ = watchdog.deadlinePassed(cyclesRan: false, now: origin + grace)
        watchdog.probeSent(sequence: 1)
        _ = watchdog.serverAnswered(sequence: 1, now: origin + grace)
        // The revive steps reactivate or replace the stream: the deadline starts over, the stall stands.
        let now = origin + .seconds(6)
        #expect(watchdog.start(now: now) == [.armDeadline(at: now + grace)])
        #expect(watchdog.state == .stuck)
    }
}
