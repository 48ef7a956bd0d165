import Dispatch
import Glibc
import SoundscapeCore
import SoundscapeSystem
import Testing

/// The shim under the suspend check: it reads both clocks, and wakes when the
/// wall clock is set (as on a resume) — at no cost until then.
@Suite struct ClockJumpWatchTests {
    @Test func readingsMoveForward() {
        let first = ClockJumpWatch.reading()
        let second = ClockJumpWatch.reading()
        #expect(second.boot >= first.boot)
        #expect(second.monotonic >= first.monotonic)
        var detector = SleepDetector()
        #expect(detector.observe(first) == nil)
        #expect(detector.observe(second) == nil, "no sleep between two readings in a row")
    }

    /// Setting the wall clock to itself (root only; it moves by the few hundred
    /// nanoseconds between reading and setting) is what a resume looks like to the timer.
    @Test func settingTheWallClockWakesTheWatch() throws {
        let woke = DispatchSemaphore(value: 0)
        let watch = try #require(ClockJumpWatch { _ in woke.signal() })
        defer { watch.stop() }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard clock_settime(CLOCK_REALTIME, &now) == 0 else {
            // Without CAP_SYS_TIME the wake cannot be caused; starting and stopping still is tested.
            #expect(errno == EPERM)
            return
        }
        #expect(woke.wait(timeout: .now() + 5) == .success, "no wake within 5 s of the clock being set")
        // Armed again: the next change wakes it too.
        clock_gettime(CLOCK_REALTIME, &now)
        #expect(clock_settime(CLOCK_REALTIME, &now) == 0)
        #expect(woke.wait(timeout: .now() + 5) == .success, "no second wake")
    }

    @Test func manyWatchesStartAndStop() throws {
        for _ in 0..<50 {
            let watch = try #require(ClockJumpWatch { _ in })
            watch.stop()
        }
    }
}
