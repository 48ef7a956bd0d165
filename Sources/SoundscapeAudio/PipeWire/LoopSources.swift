import CPipeWire
import CSoundscapeShims
import SoundscapeCore

/// A one-shot timer on a PipeWire loop (a timerfd): `fired` runs on that loop's
/// thread. Arming and disarming are a `timerfd_settime`, safe from any thread.
///
/// PipeWire runs the callback of a timer that expired even when it was
/// disarmed before the loop got to it, so `fired` must tolerate a late call.
final class LoopTimer: @unchecked Sendable {
    private let loop: UnsafeMutablePointer<pw_loop>
    private let fired: () -> Void
    /// Set once in `init`, never changed until `destroy`.
    private var source: UnsafeMutablePointer<spa_source>!

    init(loop: UnsafeMutablePointer<pw_loop>, fired: @escaping () -> Void) {
        self.loop = loop
        self.fired = fired
        source = scs_loop_add_timer(
            loop,
            { data, _ in
                Unmanaged<LoopTimer>.fromOpaque(data!).takeUnretainedValue().fired()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    func arm(after delay: Duration) {
        arm(nanoseconds: Self.nanoseconds(delay))
    }

    /// `arm(after:)` with the delay already converted (`nanoseconds(_:)`).
    func arm(nanoseconds: UInt64) {
        _ = scs_loop_update_timer(loop, source, nanoseconds, 0)
    }

    func disarm() {
        _ = scs_loop_update_timer(loop, source, 0, 0)
    }

    /// Removes the timer; on the loop's thread, or once the loop has stopped.
    func destroy() {
        scs_loop_destroy_source(loop, source)
    }

    /// A delay as `scs_loop_update_timer` takes it: rounded up to whole
    /// nanoseconds, so the timer never fires before an instant computed with
    /// the same delay, and at least 1 ns, since 0 disarms.
    static func nanoseconds(_ delay: Duration) -> UInt64 {
        UInt64(max(delay.inNanoseconds(rounded: .up), 1))
    }
}

/// An event on a PipeWire loop (an eventfd): `signal()` from any thread, the
/// real-time one included (one `write`, no lock, no allocation), and the
/// loop's thread runs the handler once for any number of signals since it last ran.
///
/// Made before its handler exists (the renderer signals the event that runs
/// the refill made from that renderer), then `attach`ed once, before anything
/// can signal it; never changed after, so it is read without synchronisation.
final class LoopEvent: @unchecked Sendable {
    private let loop: UnsafeMutablePointer<pw_loop>
    private var handler: () -> Void = {}
    private var source: UnsafeMutablePointer<spa_source>?

    init(loop: UnsafeMutablePointer<pw_loop>) {
        self.loop = loop
    }

    /// Adds the event to the loop. `loopRuns`: the loop's thread is already
    /// running it (the data loop), so the source is added there, not here.
    func attach(loopRuns: Bool = false, _ handler: @escaping () -> Void) {
        self.handler = handler
        let data = Unmanaged.passUnretained(self).toOpaque()
        let add = { [loop] in
            scs_loop_add_event(
                loop,
                { data, _ in
                    Unmanaged<LoopEvent>.fromOpaque(data!)._withUnsafeGuaranteedRef { $0.handler() }
                }, data)
        }
        if loopRuns {
            var added: UnsafeMutablePointer<spa_source>?
            runBlocking(on: loop) { added = add() }
            source = added
        } else {
            source = add()
        }
    }

    func signal() {
        if let source { _ = scs_loop_signal_event(loop, source) }
    }

    /// Removes the event; `loopRuns` as for `attach`.
    func detach(loopRuns: Bool = false) {
        guard let source else { return }
        if loopRuns {
            runBlocking(on: loop) { [loop] in scs_loop_destroy_source(loop, source) }
        } else {
            scs_loop_destroy_source(loop, source)
        }
    }
}
