import CPipeWire
import Synchronization

/// The stall deadline: a timer on the loop thread, pushed back from there and,
/// after each refill it makes, from the data thread (a `timerfd_settime`, which
/// takes no lock that sleeps and allocates nothing), with the frame count at
/// that moment. A push racing a disarm can leave one spurious firing, which
/// finds the watchdog idle or the stream moving.
final class StallDeadline: @unchecked Sendable {
    private let loop: UnsafeMutablePointer<pw_loop>
    let grace: Duration
    private let graceNanoseconds: UInt64
    private let renderer: Renderer
    private let frames = Atomic<Int>(0)
    /// Set once by `attach`, before either thread can push.
    private var timer: LoopTimer!

    init(loop: UnsafeMutablePointer<pw_loop>, grace: Duration, renderer: Renderer) {
        self.loop = loop
        self.grace = grace
        graceNanoseconds = LoopTimer.nanoseconds(grace)
        self.renderer = renderer
    }

    func attach(fired: @escaping () -> Void) {
        timer = LoopTimer(loop: loop, fired: fired)
    }

    func destroy() {
        timer.destroy()
    }

    /// How far rendering had got at the last push.
    var framesWhenPushed: Int { frames.load(ordering: .relaxed) }

    /// The whole grace from now (any thread; the data thread's after a refill).
    func push() {
        frames.store(renderer.counters.frames, ordering: .relaxed)
        timer.arm(nanoseconds: graceNanoseconds)
    }

    /// `delay` from now instead of the grace (loop thread).
    func push(after delay: Duration) {
        frames.store(renderer.counters.frames, ordering: .relaxed)
        timer.arm(after: delay)
    }

    func disarm() {
        timer.disarm()
    }
}
