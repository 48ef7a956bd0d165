import CPipeWire
import CSoundscapeShims
import CSoundscapeSystem
import Glibc
import Logging
import SoundscapeCore
import SoundscapeSystem
import Synchronization

/// The audio output: one `pw_stream` on a `pw_thread_loop`, fed by decoders
/// that run ahead on the loop thread and a renderer on PipeWire's RT thread.
///
/// It keeps itself connected (reconnecting with backoff when the server goes
/// away) and reports facts as `AudioOutputEvent`s; it never decides on its own
/// whether to play. Public methods may be called from any thread and return at
/// once: each posts a command that the loop thread carries out, in order, with
/// the thread loop's lock held (as it is while PipeWire runs our callbacks). So
/// no caller ever waits for that lock, for a decode that fills a ring, or for
/// the server; only `shutdown` waits, once, at exit.
public final class PipeWireOutput: AudioOutput, @unchecked Sendable {
    public let configuration: OutputConfiguration
    let logger: Logger
    private let events: AsyncStream<AudioOutputEvent>.Continuation

    private let threadLoop: OpaquePointer
    private let mainLoop: UnsafeMutablePointer<pw_loop>
    private let context: OpaquePointer
    private let dataLoop: UnsafeMutablePointer<pw_loop>
    private let renderer: Renderer
    private let refills: DataThreadRefill
    private let voices: VoiceBank
    /// The renderer's news goes to `refillSource` on the data loop; what that
    /// cannot handle, to `notifySource` on the loop thread.
    private let dataWake: WakeSignal
    private let loopWake: WakeSignal
    private var refillSource: UnsafeMutablePointer<spa_source>!
    private var notifySource: UnsafeMutablePointer<spa_source>!
    private var stopTimer: UnsafeMutablePointer<spa_source>!
    private var reconnectTimer: UnsafeMutablePointer<spa_source>!
    private let stallDeadline: StallDeadline
    /// Commands posted from other threads, and the loop event that runs them.
    private let commands = Mutex<[Command]>([])
    private var commandSource: UnsafeMutablePointer<spa_source>!

    /// What counts as a call; a reload may change it (loop thread, lock held).
    private(set) var callDetection: CallDetection
    private let cache: PCMCache?

    private enum Command: Sendable {
        case start
        case setCallDetection(CallDetection)
        case reconnect(reason: String)
        case reactivate
        case recreateStream
        case setTarget(String?)
        case play(SoundscapeData, Volume, FadeIn)
        case setVolume(Volume)
        case stop
    }

    // State below is touched only with the thread loop's lock held.
    private var connection: StreamConnection?
    private var reconnect: Backoff
    private var running = false
    private var shutDown = false
    /// The user's intent as last commanded: play (fade in) or stop (fade out).
    private var wantRunning = false
    /// Whether we asked PipeWire to schedule the stream.
    private var active = false
    private var streaming = false
    private var pendingSwitch: SoundscapeData?
    private var route: String?
    /// The sink we are asked to be linked to, and the node we last told WirePlumber about.
    private var target: String?
    private var targetAppliedTo: (node: UInt32, sink: String?)?
    /// The progress watchdog's view of the stream (see `progressTimerFired`).
    private var watch: Watch = .flowing
    private var probeTimer: UnsafeMutablePointer<spa_source>!
    /// While the server is away: its socket's directory, watched (see `ServerSocketWatch`).
    private var socketWatch: (watch: ServerSocketWatch, source: UnsafeMutablePointer<spa_source>)?

    private enum Watch: Equatable {
        /// Cycles run (or the stream is not active).
        case flowing
        /// No cycle for the grace; a `sync` went out to see whether the server
        /// answers. `reported` once `.serverUnresponsive` went out.
        case probing(sequence: Int32, reported: Bool)
        /// The server answers again after it did not: its cycles get a moment to resume.
        case serverBack
        /// The server answers and still no cycle runs: `.stalled` went out.
        case stuck

        /// Whether an event said audio had stopped, so its return is news (`.flowing`).
        var reported: Bool {
            switch self {
            case .flowing, .probing(_, false): false
            case .probing(_, true), .serverBack, .stuck: true
            }
        }
    }

    public init(configuration: OutputConfiguration, logger: Logger,
                events: AsyncStream<AudioOutputEvent>.Continuation) {
        _ = PipeWireLibrary.initialised
        self.configuration = configuration
        self.logger = logger
        self.events = events
        reconnect = Backoff(initial: configuration.reconnectInitial, maximum: configuration.reconnectMaximum)

        threadLoop = pw_thread_loop_new("soundscaped-pw", nil)
        mainLoop = pw_thread_loop_get_loop(threadLoop)!
        // Our own module list (see ClientContext), else client-rt.conf, which
        // loads module-rt for a realtime data thread (RTKit, or RLIMIT_RTPRIO;
        // plain client.conf does not on PipeWire 0.3.x), else the default, for
        // newer releases that fold it into client.conf and drop the file.
        context = ClientContext.make(loop: mainLoop, logger: logger)
            ?? pw_context_new(mainLoop, makeProperties([PW_KEY_CONFIG_NAME: "client-rt.conf"]), 0)
            ?? pw_context_new(mainLoop, makeProperties([:]), 0)
        let data = pw_context_get_data_loop(context)
        dataLoop = pw_data_loop_get_loop(data)!
        // The data thread inherits its creator's name (a Swift concurrency
        // worker's); give it ours so top, perf and the benchmark say what it is.
        if let thread = pw_data_loop_get_thread(data) {
            _ = scs_set_thread_name(UInt(bitPattern: Int(bitPattern: thread)), "soundscaped-rt")
        }
        let dataWake = WakeSignal(loop: dataLoop)
        let loopWake = WakeSignal(loop: mainLoop)
        self.dataWake = dataWake
        self.loopWake = loopWake
        let renderer = Renderer(settings: configuration.render, wake: { dataWake.fire() })
        self.renderer = renderer
        let stallDeadline = StallDeadline(loop: mainLoop, grace: configuration.stallGrace, renderer: renderer)
        self.stallDeadline = stallDeadline
        refills = DataThreadRefill(renderer: renderer, dataLoop: dataLoop,
                                   wakeLoopThread: { loopWake.fire() },
                                   refilled: { stallDeadline.push() })
        callDetection = configuration.callDetection
        let cache = configuration.pcmCacheDirectory.map {
            PCMCache(directory: $0, budgetBytes: configuration.pcmCacheBudgetBytes, logger: logger)
        }
        self.cache = cache
        voices = VoiceBank(
            ringFrames: configuration.ringFrames,
            cache: cache,
            refills: refills,
            logger: logger)

        let userData = Unmanaged.passUnretained(self).toOpaque()
        notifySource = scs_loop_add_event(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().handleNotifications()
        }, userData)
        loopWake.source = notifySource
        commandSource = scs_loop_add_event(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().runCommands()
        }, userData)
        // The data loop is already running: its source is added on its own thread.
        let refillsData = Unmanaged.passUnretained(refills).toOpaque()
        var refillSource: UnsafeMutablePointer<spa_source>?
        runBlocking(on: dataLoop) {
            refillSource = scs_loop_add_event(dataLoop, { data, _ in
                Unmanaged<DataThreadRefill>.fromOpaque(data!).takeUnretainedValue().run()
            }, refillsData)
        }
        self.refillSource = refillSource
        dataWake.source = refillSource
        stopTimer = scs_loop_add_timer(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().finishStop(reason: "fade-out timed out")
        }, userData)
        reconnectTimer = scs_loop_add_timer(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().reconnectTimerFired()
        }, userData)
        probeTimer = scs_loop_add_timer(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().probeTimedOut()
        }, userData)
        stallDeadline.timer = scs_loop_add_timer(mainLoop, { data, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().progressTimerFired()
        }, userData)
        pw_thread_loop_start(threadLoop)
    }

    deinit {
        shutdown()
        pw_thread_loop_stop(threadLoop)
        scs_loop_destroy_source(mainLoop, notifySource)
        scs_loop_destroy_source(mainLoop, commandSource)
        scs_loop_destroy_source(mainLoop, stopTimer)
        scs_loop_destroy_source(mainLoop, reconnectTimer)
        scs_loop_destroy_source(mainLoop, stallDeadline.timer)
        scs_loop_destroy_source(mainLoop, probeTimer)
        if let socketWatch { scs_loop_destroy_source(mainLoop, socketWatch.source) }
        let (dataLoop, refillSource) = (self.dataLoop, self.refillSource)
        runBlocking(on: dataLoop) { scs_loop_destroy_source(dataLoop, refillSource) }
        pw_context_destroy(context)
        pw_thread_loop_destroy(threadLoop)
    }

    // MARK: Public API (any thread; returns at once)

    public func start() { post(.start) }
    public func reconnectNow(reason: String) { post(.reconnect(reason: reason)) }
    public func reactivate() { post(.reactivate) }
    public func recreateStream() { post(.recreateStream) }
    public func setTarget(_ sink: String?) { post(.setTarget(sink)) }
    public func play(_ data: SoundscapeData, volume: Volume, fadeIn: FadeIn) { post(.play(data, volume, fadeIn)) }
    public func setVolume(_ volume: Volume) { post(.setVolume(volume)) }
    public func stop() { post(.stop) }

    /// New rules for what counts as a call (a reload): applied at once.
    public func setCallDetection(_ detection: CallDetection) { post(.setCallDetection(detection)) }

    /// A new disk budget for decoded loops (a reload): the next loop cached keeps to it.
    public func setCacheBudget(bytes: Int64) { cache?.setBudget(bytes: bytes) }

    /// Disconnects for good; used on daemon shutdown. Waits for the loop thread.
    public func shutdown() {
        locked {
            guard !shutDown else { return }
            shutDown = true
            running = false
            disarm(reconnectTimer)
            disarm(stopTimer)
            stallDeadline.disarm()
            stopWatchingForServer()
            tearDown()
        }
    }

    private func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        // An eventfd write: it never blocks, and the loop runs the commands when it next wakes.
        _ = scs_loop_signal_event(mainLoop, commandSource)
    }

    // MARK: Commands (loop thread, lock held)

    private func runCommands() {
        let pending = commands.withLock { queued -> [Command] in
            defer { queued.removeAll() }
            return queued
        }
        for command in pending where !shutDown {
            switch command {
            case .start: startConnecting()
            case .setCallDetection(let detection):
                callDetection = detection
                connection?.graph.setDetection(detection)
            case .reconnect(let reason): reconnect(reason: reason)
            case .reactivate: reactivateStream()
            case .recreateStream: replaceStream()
            case .setTarget(let sink): linkTo(sink)
            case .play(let data, let volume, let fadeIn): startPlaying(data, volume: volume, fadeIn: fadeIn)
            case .setVolume(let volume): applyVolume(volume)
            case .stop: fadeOut()
            }
        }
    }

    /// Starts connecting (and keeps reconnecting) to the PipeWire server.
    private func startConnecting() {
        guard !running else { return }
        running = true
        attemptConnect()
    }

    /// Drops the connection and connects again at once: the watchdog's last resort.
    private func reconnect(reason: String) {
        guard running else { return }
        logger.warning("reconnecting to PipeWire", metadata: ["reason": "\(reason)"])
        tearDown()
        events.yield(.disconnected(reason: reason))
        reconnect.reset()
        attemptConnect()
    }

    /// The watchdog's first step: make the stream inactive and active again,
    /// which makes PipeWire re-negotiate its scheduling.
    private func reactivateStream() {
        guard let connection, active else { return }
        logger.warning("reactivating the stream")
        connection.setActive(false)
        connection.setActive(true)
        armProgressWatch()
    }

    /// The watchdog's second step: a new stream on the same connection.
    private func replaceStream() {
        guard let connection, !connection.isBroken else { return }
        logger.warning("recreating the stream")
        do {
            try connection.recreateStream(configuration: configuration)
            active = false
            if streaming {
                streaming = false
                events.yield(.streaming(false))
            }
            if wantRunning {
                activate(true)
            }
            armProgressWatch()
        } catch {
            logger.error("cannot recreate the stream: \(error)")
        }
    }

    /// Links our stream to `sink` (by `node.name`) through WirePlumber; applied
    /// again to every new stream node.
    private func linkTo(_ sink: String?) {
        target = sink
        applyTarget()
    }

    private func applyTarget() {
        guard let connection, let node = connection.nodeID else { return }
        if let applied = targetAppliedTo, applied.node == node, applied.sink == target { return }
        targetAppliedTo = (node, target)
        logger.debug("linking our stream", metadata: ["node": "\(node)", "target": "\(target ?? "(default)")"])
        connection.graph.setTarget(node: node, sink: target)
    }

    /// Plays `data` at `volume`: fades in from silence, or crossfades when
    /// another soundscape is audible. Playing what already plays only makes
    /// sure it runs.
    private func startPlaying(_ data: SoundscapeData, volume: Volume, fadeIn: FadeIn) {
        let fromSilence = !active
        wantRunning = true
        disarm(stopTimer)
        if voices.targetSoundscape == data.id {
            // Already fading in (or playing): a switch queued behind that
            // crossfade is overtaken. Loading it again would crossfade the
            // soundscape into a copy of itself restarted from frame 0.
            pendingSwitch = nil
        } else {
            switchVoice(to: data)
        }
        let position = Float(volume.percent) / 100
        let renderer = self.renderer
        runBlocking(on: dataLoop) {
            renderer.applyVolume(position: position, immediately: fromSilence)
            renderer.applyRunning(true, fadeIn: fadeIn)
        }
        activate(true)
    }

    private func applyVolume(_ volume: Volume) {
        let position = Float(volume.percent) / 100
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applyVolume(position: position) }
    }

    /// Fades out, then makes the stream inactive so the sink may suspend;
    /// reports `.stopped` when done.
    private func fadeOut() {
        wantRunning = false
        pendingSwitch = nil
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applyRunning(false) }
        if active && streaming {
            // The fade needs cycles to run; if the graph stops calling us the timer ends it.
            arm(stopTimer, after: Duration.milliseconds(configuration.render.fadeOutFrames * 1000 / RenderSettings.sampleRate) + .seconds(1))
        } else {
            finishStop(reason: nil)
        }
    }

    /// Progress counters for the watchdog; cheap and lock-free.
    public var counters: Renderer.Counters { renderer.counters }

    // MARK: Connection lifecycle (loop thread, lock held)

    private func attemptConnect() {
        guard running, connection == nil else { return }
        do {
            connection = try StreamConnection(
                context: context, configuration: configuration, renderer: renderer, output: self)
            targetAppliedTo = nil
            connection?.graph.onChange = { [events, logger] facts in
                logger.debug("graph", metadata: ["default": "\(facts.defaultSink ?? "-")",
                                                 "sinks": "\(facts.sinks.map(\.name))", "calls": "\(facts.communicationStreams)"])
                events.yield(.graph(facts))
            }
            reconnect.reset()
            stopWatchingForServer()
            active = false
            streaming = false
            logger.info("connected to PipeWire")
            events.yield(.connected)
        } catch {
            let delay = reconnect.next()
            logger.debug("PipeWire not reachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(delay)"])
            if reconnect.current == reconnect.initial {
                events.yield(.disconnected(reason: "\(error)"))
            }
            watchForServer()
            arm(reconnectTimer, after: delay)
        }
    }

    private func tearDown() {
        guard let connection else { return }
        self.connection = nil
        connection.close()
        active = false
        if streaming {
            streaming = false
            events.yield(.streaming(false))
        }
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applySilence() }
        updateRoute(nil)
        stallDeadline.disarm()
        // The disconnect is the news now; a stall on the old connection is over.
        watch = .flowing
        disarm(probeTimer)
        if !wantRunning { disarm(stopTimer) }
    }

    /// Called from the core's error event: the server is gone. The connection
    /// is torn down from the reconnect timer, outside PipeWire's callback.
    func serverLost(_ message: String) {
        guard connection != nil else { return }
        logger.warning("lost the PipeWire server", metadata: ["error": "\(message)"])
        events.yield(.disconnected(reason: message))
        connection?.markBroken()
        reconnect.reset()
        watchForServer()
        arm(reconnectTimer, after: reconnect.next())
    }

    /// Watches for the server's socket while it is away (loop thread, lock held).
    private func watchForServer() {
        guard socketWatch == nil, !shutDown, let watch = ServerSocketWatch(environment: FileSystem.environment()) else {
            return
        }
        let source = scs_loop_add_io_in(mainLoop, watch.fd, { data, _, _ in
            Unmanaged<PipeWireOutput>.fromOpaque(data!).takeUnretainedValue().serverSocketChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard let source else { return }
        socketWatch = (watch, source)
    }

    private func stopWatchingForServer() {
        guard let socketWatch else { return }
        scs_loop_destroy_source(mainLoop, socketWatch.source)
        self.socketWatch = nil
    }

    /// The socket's directory changed: if the socket appeared, connect now, not at the
    /// backoff's next step. 20 ms later, since the server binds a moment before it listens.
    func serverSocketChanged() {
        guard let socketWatch, socketWatch.watch.socketAppeared(), running, !shutDown else { return }
        logger.debug("PipeWire's socket appeared; connecting")
        reconnect.reset()
        arm(reconnectTimer, after: .milliseconds(20))
    }

    func reconnectTimerFired() {
        if connection?.isBroken == true { tearDown() }
        attemptConnect()
    }

    // MARK: Stream facts (loop thread, lock held)

    func streamStateChanged(_ state: pw_stream_state, error: String?) {
        if let error { logger.warning("stream error", metadata: ["error": "\(error)"]) }
        let isStreaming = state == PW_STREAM_STATE_STREAMING
        if isStreaming != streaming {
            streaming = isStreaming
            events.yield(.streaming(isStreaming))
        }
        refreshRoute()
    }

    func refreshRoute() {
        updateRoute(connection?.currentRoute())
        applyTarget()
    }

    private func updateRoute(_ newRoute: String?) {
        guard newRoute != route else { return }
        route = newRoute
        events.yield(.route(newRoute))
    }

    // MARK: Voices and the renderer's notifications (loop thread, lock held)

    private func switchVoice(to data: SoundscapeData) {
        do {
            guard let slot = try voices.prepare(data, slotsInUse: renderer.slotsInUse) else {
                // A crossfade is under way; the latest request wins when it ends.
                pendingSwitch = data
                return
            }
            pendingSwitch = nil
            voices.makeTarget(slot)
            let ring = voices.ring(slot)
            let renderer = self.renderer
            runBlocking(on: dataLoop) { renderer.applyVoice(slot: slot, ring: ring, gain: data.gain) }
        } catch {
            events.yield(.decodeFailed(error))
        }
    }

    private func handleNotifications() {
        let notifications = refills.takeForwarded()
        if notifications.contains(.slotReleased) {
            voices.releaseUnused(slotsInUse: renderer.slotsInUse)
            if let next = pendingSwitch { switchVoice(to: next) }
        }
        if notifications.contains(.refill) {
            for failure in voices.refill() { events.yield(.decodeFailed(failure)) }
            if active && watch == .flowing { armProgressWatch() }
        }
        if notifications.contains(.progressed) {
            progressResumed()
        }
        if notifications.contains(.fadedOut), !wantRunning {
            finishStop(reason: nil)
        }
    }

    private func finishStop(reason: String?) {
        disarm(stopTimer)
        guard !wantRunning else { return }
        if let reason { logger.debug("stopping without a completed fade", metadata: ["reason": "\(reason)"]) }
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applySilence() }
        activate(false)
        // An inactive stream is not streaming; say so before `.stopped`, so nobody
        // believes a stream that is about to pause still runs.
        if streaming {
            streaming = false
            events.yield(.streaming(false))
        }
        events.yield(.stopped)
    }

    private func activate(_ on: Bool) {
        guard let connection else {
            active = false
            disarmProgressWatch()
            return
        }
        if active != on {
            active = on
            connection.setActive(on)
        }
        if on { armProgressWatch() } else { disarmProgressWatch() }
    }

    // MARK: Progress watchdog (loop thread, lock held)

    /// (Re)starts the stall deadline from now. Called on start and on every
    /// refill (here or on the data thread), so while audio flows the timer never fires.
    private func armProgressWatch() {
        stallDeadline.push()
    }

    private func disarmProgressWatch() {
        stallDeadline.disarm()
        resetWatch()
    }

    /// Back to `.flowing`, saying so if an event said otherwise.
    private func resetWatch() {
        disarm(probeTimer)
        let wasReported = watch.reported
        watch = .flowing
        if wasReported { events.yield(.flowing) }
    }

    /// No refill for the stall grace. If cycles still ran after the last refill,
    /// look again shortly (the grace counts from the last cycle, not the last
    /// refill). Otherwise audio has stopped: before anything is torn down, find
    /// out whether the server itself answers. A frozen server (SIGSTOP, a
    /// debugger, an overloaded machine) resumes our stream as it was, and
    /// replacing the stream meanwhile would only delay the sound when it does.
    private func progressTimerFired() {
        guard active else { return }
        if renderer.counters.frames != stallDeadline.framesWhenPushed {
            stallDeadline.push(after: Self.recheck)
            return
        }
        switch watch {
        case .flowing:
            guard let connection else { return }
            logger.warning("audio stalled: no cycle for \(configuration.stallGrace); asking PipeWire whether it answers")
            watch = .probing(sequence: connection.syncServer(), reported: false)
            arm(probeTimer, after: Self.recheck)
        case .serverBack:
            logger.warning("PipeWire answers, but our stream runs no cycle")
            watch = .stuck
            events.yield(.stalled)
        case .probing, .stuck:
            break
        }
        // Let the RT thread tell us the moment a cycle runs again.
        renderer.watchForProgress()
    }

    /// How soon to look again after a late cycle, and how long the server has to answer.
    private static let recheck: Duration = .milliseconds(500)

    /// The server did not echo the sync in time: it is not answering.
    private func probeTimedOut() {
        guard case .probing(let sequence, false) = watch else { return }
        watch = .probing(sequence: sequence, reported: true)
        logger.warning("PipeWire does not answer; waiting for it rather than replacing the stream")
        events.yield(.serverUnresponsive)
    }

    /// The core echoed a sync (core `done`). If ours, the server answers: a stream
    /// still without cycles is stuck on our side. A server that had stopped
    /// answering first gets a moment to run its cycles again.
    func serverAnswered(sequence: Int32) {
        guard case .probing(let expected, let reported) = watch, sequence == expected else { return }
        disarm(probeTimer)
        if reported {
            logger.info("PipeWire answers again")
            watch = .serverBack
            stallDeadline.push(after: Self.recheck)
        } else {
            logger.warning("PipeWire answers, but our stream runs no cycle")
            watch = .stuck
            events.yield(.stalled)
        }
    }

    private func progressResumed() {
        guard watch != .flowing else { return }
        logger.info("audio flows again")
        resetWatch()
        if active { armProgressWatch() }
    }

    // MARK: Helpers

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        pw_thread_loop_lock(threadLoop)
        defer { pw_thread_loop_unlock(threadLoop) }
        return try body()
    }

    private func arm(_ timer: UnsafeMutablePointer<spa_source>, after delay: Duration) {
        _ = scs_loop_update_timer(mainLoop, timer, timerNanoseconds(delay), 0)
    }

    private func disarm(_ timer: UnsafeMutablePointer<spa_source>) {
        _ = scs_loop_update_timer(mainLoop, timer, 0, 0)
    }
}

/// A timer's delay as `scs_loop_update_timer` takes it: at least 1 ns, since 0 disarms.
private func timerNanoseconds(_ delay: Duration) -> UInt64 {
    let (seconds, attoseconds) = delay.components
    return max(UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000), 1)
}

/// The stall deadline: a timer on the loop thread, pushed back from there and,
/// after each refill it does, from the data thread (a timerfd write is safe from
/// any thread), with the frame count at that moment. A push racing a disarm can
/// leave one spurious firing, which finds the stream inactive or moving.
private final class StallDeadline: @unchecked Sendable {
    private let loop: UnsafeMutablePointer<pw_loop>
    private let nanoseconds: UInt64
    private let renderer: Renderer
    private let frames = Atomic<Int>(0)
    /// Set once in `PipeWireOutput.init`, before either thread can push.
    var timer: UnsafeMutablePointer<spa_source>!

    init(loop: UnsafeMutablePointer<pw_loop>, grace: Duration, renderer: Renderer) {
        self.loop = loop
        nanoseconds = timerNanoseconds(grace)
        self.renderer = renderer
    }

    var framesWhenPushed: Int { frames.load(ordering: .relaxed) }

    func push() {
        frames.store(renderer.counters.frames, ordering: .relaxed)
        _ = scs_loop_update_timer(loop, timer, nanoseconds, 0)
    }

    /// Looks again after `delay` instead of the full grace.
    func push(after delay: Duration) {
        frames.store(renderer.counters.frames, ordering: .relaxed)
        _ = scs_loop_update_timer(loop, timer, timerNanoseconds(delay), 0)
    }

    func disarm() {
        _ = scs_loop_update_timer(loop, timer, 0, 0)
    }
}

/// An eventfd source to signal; set up in `PipeWireOutput.init` before any
/// thread signals it and never changed after, so it is read without synchronisation.
private final class WakeSignal: @unchecked Sendable {
    let loop: UnsafeMutablePointer<pw_loop>
    var source: UnsafeMutablePointer<spa_source>?

    init(loop: UnsafeMutablePointer<pw_loop>) {
        self.loop = loop
    }

    func fire() {
        if let source { _ = scs_loop_signal_event(loop, source) }
    }
}

extension Renderer {
    /// Stops at once (no fade): used when the stream goes away or is made inactive.
    func applySilence() {
        applyRunning(false)
        applyFadeLevel(0)
    }
}
