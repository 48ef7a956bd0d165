import SoundscapeCore
import Testing

/// `PlayerLifecycle` and `CommandQueue`: who waits for what, and who goes on
/// when. Waiters are plain strings here; the daemon holds continuations.
@Suite struct PlayerLifecycleTests {
    @Test func callsWaitUntilTheSavedStateIsRestored() {
        var lifecycle = PlayerLifecycle<String>()
        #expect(lifecycle.waitUntilRunning("status") == [])
        #expect(lifecycle.waitUntilRunning("play") == [])
        #expect(!lifecycle.isRunning)
        #expect(lifecycle.restored() == ["status", "play"])
        #expect(lifecycle.isRunning)
        // Once running, nobody waits.
        #expect(lifecycle.waitUntilRunning("volume") == ["volume"])
        #expect(lifecycle.restored() == [])
    }

    @Test func aPlayWaitsOnlyWhileItsStartSettles() {
        var lifecycle = PlayerLifecycle<String>()
        _ = lifecycle.restored()
        #expect(lifecycle.waitForSettle("play 1", settling: false) == ["play 1"])
        #expect(lifecycle.waitForSettle("play 2", settling: true) == [])
        #expect(lifecycle.waitForSettle("play 3", settling: true) == [])
        #expect(lifecycle.settlingCount == 2)
        #expect(lifecycle.settled() == ["play 2", "play 3"])
        #expect(lifecycle.settlingCount == 0)
        #expect(lifecycle.settled() == [])
    }

    @Test func theExitLetsEveryWaiterGoAndWaitsForTheFadeOut() {
        var lifecycle = PlayerLifecycle<String>()
        _ = lifecycle.restored()
        _ = lifecycle.waitForSettle("play", settling: true)
        #expect(lifecycle.shutdownBegins() == ["play"])
        #expect(lifecycle.isShuttingDown)
        #expect(lifecycle.shutdownBegins() == nil, "a second shutdown is a no-op")
        // Nothing waits for a start any more: the answers say what is true.
        #expect(lifecycle.waitForSettle("late play", settling: true) == ["late play"])
        #expect(lifecycle.waitForFadeOut("exit") == [])
        #expect(lifecycle.fadeOutEnded() == ["exit"])
        #expect(lifecycle.fadeOutEnded() == [], "the output's report and the bound may both come")
        #expect(lifecycle.waitForFadeOut("exit again") == ["exit again"])
    }

    @Test func anExitWhileStartingReleasesTheCallersAndTheRestoreChangesNothing() {
        var lifecycle = PlayerLifecycle<String>()
        _ = lifecycle.waitUntilRunning("status")
        #expect(lifecycle.shutdownBegins() == ["status"])
        #expect(lifecycle.restored() == [])
        #expect(lifecycle.isShuttingDown)
        #expect(!lifecycle.isRunning)
    }

    @Test func sessionCommandsRunOneAtATimeInTheOrderCalled() {
        var queue = CommandQueue<String>()
        #expect(queue.enter() == true, "the first command goes on at once")
        #expect(queue.enter() == false)
        queue.wait("pause")
        #expect(queue.enter() == false)
        queue.wait("stop")
        #expect(queue.leave() == ["pause"])
        #expect(queue.isBusy, "the next command holds the turn")
        #expect(queue.leave() == ["stop"])
        #expect(queue.leave() == [])
        #expect(!queue.isBusy)
        #expect(queue.enter() == true)
    }
}

@Suite struct TickScheduleTests {
    let start = ContinuousClock.now

    @Test func oneTimerServesEveryDeadlineEarliestFirst() {
        var ticks = TickSchedule()
        #expect(ticks.add(start + .seconds(3)) == start + .seconds(3), "the first deadline arms the timer")
        #expect(ticks.add(start + .seconds(5)) == nil, "a later one waits behind it")
        #expect(ticks.add(start + .seconds(1)) == start + .seconds(1), "an earlier one re-arms it")
        #expect(ticks.add(start + .seconds(3)) == nil, "the same instant is one tick")
        #expect(ticks.pending.count == 3)
        #expect(ticks.fired(now: start + .seconds(1)) == start + .seconds(3))
        #expect(ticks.fired(now: start + .seconds(4)) == start + .seconds(5), "a late timer drops what is due")
        #expect(ticks.fired(now: start + .seconds(5)) == nil)
        #expect(ticks.next == nil)
    }

    @Test func anEarlyTimerDropsNothing() {
        var ticks = TickSchedule()
        _ = ticks.add(start + .seconds(3))
        #expect(ticks.fired(now: start + .milliseconds(2999)) == start + .seconds(3))
        #expect(ticks.pending == [start + .seconds(3)])
    }
}
