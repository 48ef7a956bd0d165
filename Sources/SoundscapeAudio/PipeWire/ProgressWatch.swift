import CPipeWire
import Logging
import SoundscapeCore
import Synchronization

/// Carries out the progress watchdog's decisions (`ProgressWatchdog`, pure,
/// in SoundscapeCore): the stall deadline, the answer deadline of a `sync`
/// sent to the server, the renderer's one-shot cycle report, and the events.
///
/// Loop thread only, with the thread loop's lock held (as it is while
/// PipeWire runs our callbacks); the one exception is `StallDeadline.push`,
/// which the data thread calls after each refill it makes.
final class ProgressWatch {
    private var watchdog: ProgressWatchdog
    let deadline: StallDeadline
    private var answerDeadline: LoopTimer!
    private let renderer: Renderer
    private let events: AsyncStream<AudioOutputEvent>.Continuation
    private let logger: Logger
    /// Sends the server a `sync` on the current connection; its sequence number.
    private let syncServer: () -> Int32?

    init(
        loop: UnsafeMutablePointer<pw_loop>, deadline: StallDeadline, renderer: Renderer,
        events: AsyncStream<AudioOutputEvent>.Continuation, logger: Logger, syncServer: @escaping () -> Int32?
    ) {
        watchdog = ProgressWatchdog(grace: deadline.grace)
        self.renderer = renderer
        self.events = events
        self.logger = logger
        self.syncServer = syncServer
        self.deadline = deadline
        deadline.attach { [unowned self] in
            let cyclesRan = renderer.counters.frames != deadline.framesWhenPushed
            perform { $0.deadlinePassed(cyclesRan: cyclesRan, now: $1) }
        }
        answerDeadline = LoopTimer(loop: loop) { [unowned self] in
            perform { $0.answerDeadlinePassed(now: $1) }
        }
    }

    /// Removes the timers; on the loop thread, or once it has stopped.
    func destroy() {
        deadline.destroy()
        answerDeadline.destroy()
    }

    /// The stream is active and meant to run: watch it, the deadline from now.
    func start() { perform { watchdog, now in watchdog.start(now: now) } }
    /// The stream was made inactive.
    func stop() { perform { watchdog, _ in watchdog.stop() } }
    /// The connection went away (its news is the disconnect).
    func connectionDropped() { perform { watchdog, _ in watchdog.connectionDropped() } }
    /// A ring was refilled on the loop thread.
    func refilled() { perform { watchdog, now in watchdog.refilled(now: now) } }
    /// The renderer reported a cycle after `watchForProgress`.
    func cycleRan() { perform { watchdog, now in watchdog.cycleRan(now: now) } }
    /// The core echoed a sync (ours or not).
    func serverAnswered(sequence: Int32) {
        perform { watchdog, now in watchdog.serverAnswered(sequence: sequence, now: now) }
    }

    private func perform(_ input: (inout ProgressWatchdog, ContinuousClock.Instant) -> [ProgressWatchdog.Action]) {
        let now = ContinuousClock.now
        let before = watchdog.state
        let actions = input(&watchdog, now)
        if watchdog.state != before { log(from: before) }
        for action in actions {
            switch action {
            case .armDeadline(let at): deadline.push(after: now.duration(to: at))
            case .disarmDeadline: deadline.disarm()
            case .probeServer(let due):
                if let sequence = syncServer() { watchdog.probeSent(sequence: sequence) }
                answerDeadline.arm(after: now.duration(to: due))
            case .cancelProbe: answerDeadline.disarm()
            case .watchForCycle: renderer.watchForProgress()
            case .report(.serverUnresponsive): events.yield(.serverUnresponsive)
            case .report(.stalled): events.yield(.stalled)
            case .report(.flowing): events.yield(.flowing)
            }
        }
    }

    private func log(from before: ProgressWatchdog.State) {
        switch watchdog.state {
        case .probing(_, _, false):
            logger.warning("audio stalled: no cycle for \(watchdog.grace); asking PipeWire whether it answers")
        case .probing(_, _, true):
            logger.warning("PipeWire does not answer; waiting for it rather than replacing the stream")
        case .serverBack:
            logger.info("PipeWire answers again")
        case .stuck:
            logger.warning("PipeWire answers, but our stream runs no cycle")
        case .flowing where before != .idle:
            logger.info("audio flows again")
        case .idle, .flowing:
            break
        }
    }
}

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
