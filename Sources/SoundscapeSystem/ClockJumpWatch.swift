import CSoundscapeSystem
import Glibc
import SoundscapeCore

/// Wakes when the machine resumes from a suspend, at no cost while it does not.
///
/// A `CLOCK_REALTIME` timerfd armed far in the future with `TFD_TIMER_CANCEL_ON_SET`
/// is cancelled by the kernel whenever the wall clock is set — and a resume counts as
/// one (the kernel's `timekeeping_resume` notifies timerfds). A thread blocks in
/// `poll` on it; at each cancellation it reads `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`
/// and reports them. Whether the machine slept, as opposed to someone setting the
/// date, is `SleepDetector`'s pure decision.
public final class ClockJumpWatch: Sendable {
    /// Both clocks now.
    public static func reading() -> SleepDetector.Reading {
        SleepDetector.Reading(boot: now(CLOCK_BOOTTIME), monotonic: now(CLOCK_MONOTONIC))
    }

    private let stopWrite: Int32

    /// Starts watching; nil if the kernel offers no such timer (then nothing is watched).
    public init?(onJump: @escaping @Sendable (SleepDetector.Reading) -> Void) {
        let timer = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC))
        guard timer >= 0 else { return nil }
        guard Self.arm(timer), let stop = try? Spawn.pipe() else {
            close(timer)
            return nil
        }
        stopWrite = stop.write
        BlockingThread.start {
            Self.watch(timer: timer, stop: stop.read, onJump: onJump)
            close(timer)
            close(stop.read)
        }
    }

    /// Ends the thread.
    public func stop() {
        close(stopWrite)
    }

    private static func watch(timer: Int32, stop: Int32, onJump: @Sendable (SleepDetector.Reading) -> Void) {
        while true {
            var descriptors = [
                pollfd(fd: timer, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            var expirations: UInt64 = 0
            let got = read(timer, &expirations, 8)
            let cancelled = got < 0 && errno == ECANCELED
            if got < 0, !cancelled, errno != EINTR, errno != EAGAIN { return }
            // A cancelled (or, in centuries, expired) timer must be armed again — before the
            // clocks are read, so that a change from now on wakes us again and none is lost.
            guard arm(timer) else { return }
            if cancelled { onJump(reading()) }
        }
    }

    /// A hundred years from now, on the wall clock, cancelled if that clock is set.
    private static func arm(_ timer: Int32) -> Bool {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        var value = itimerspec()
        value.it_value.tv_sec = wall.tv_sec + 100 * 365 * 86_400
        return timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &value, nil) == 0
    }

    private static func now(_ clock: clockid_t) -> Duration {
        var time = timespec()
        clock_gettime(clock, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
