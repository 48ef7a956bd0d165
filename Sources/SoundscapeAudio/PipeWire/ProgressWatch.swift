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
