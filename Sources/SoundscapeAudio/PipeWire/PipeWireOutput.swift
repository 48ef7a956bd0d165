import CPipeWire
import CSoundscapeShims
import CSoundscapeSystem
import Glibc
import Logging
import SoundscapeCore
import Synchronization

/// The audio output: one `pw_stream` on a `pw_thread_loop`, fed by decoders
/// that run ahead on the loop thread and a renderer on PipeWire's RT thread.
///
/// A router: public methods post commands; the loop thread carries them out
/// and routes PipeWire's callbacks, each to the part it concerns:
/// - `ConnectionKeeper`: the connection, reconnecting with backoff;
/// - `Playback`: voices, fades, and whether our stream is active;
/// - `ProgressWatch`: the progress watchdog (its decisions: `ProgressWatchdog`);
/// - here: commands, the sink we link to, and the route we report.
/// It reports facts as `AudioOutputEvent`s and never decides on its own
/// whether to play.
///
/// Public methods may be called from any thread and return at once: each
/// posts a command (an eventfd write) that the loop thread carries out, in
/// order, with the thread loop's lock held (as it is while PipeWire runs our
/// callbacks, and as every part assumes). So no caller ever waits for that
/// lock, for a decode that fills a ring, or for the server; only `shutdown`
/// waits, once, at exit. docs/architecture.md has the map of threads.
public final class PipeWireOutput: AudioOutput, @unchecked Sendable {
    public let configuration: OutputConfiguration
    let logger: Logger
    private let events: AsyncStream<AudioOutputEvent>.Continuation

    private let threadLoop: OpaquePointer
    private let mainLoop: UnsafeMutablePointer<pw_loop>
    private let context: OpaquePointer
    /// Internal, not private, for the tests that run code on the data thread.
    let dataLoop: UnsafeMutablePointer<pw_loop>
    private let renderer: Renderer
    private let refills: DataThreadRefill
    private let cache: PCMCache?
    /// The renderer's news goes to `refillEvent` on the data loop; what that
    /// cannot handle, to `notifyEvent` on the loop thread.
    private let refillEvent: LoopEvent
    private let notifyEvent: LoopEvent
    /// Commands posted from other threads, and the loop event that runs them.
    private let commands = Mutex<[Command]>([])
    private let commandEvent: LoopEvent

    private enum Command: Sendable {
        case start
        case setCallDetection(CallDetection)
        case reconnect(reason: String)
        case reactivate
        case recreateStream
        case setTarget(String?)
        case play([LayerData], Volume, FadeIn)
        case dim(Duration)
        case undim
        case setVolume(Volume)
        case stop
    }

    // The parts, and the state below: loop thread, lock held. Set once in `init`.
    private var keeper: ConnectionKeeper!
    private var watch: ProgressWatch!
    private var playback: Playback!
    /// What counts as a call; a reload may change it.
    private(set) var callDetection: CallDetection
    /// The sink we are asked to link our stream to (`node.name`; nil: the default).
    private var linkTarget: String?
    /// The node and sink we last told WirePlumber about, so each new node is told once.
    private var linkRequested: (node: UInt32, sink: String?)?
    /// The sink the player last heard we play to (`.route`).
    private var reportedRoute: String?

    public init(
        configuration: OutputConfiguration, logger: Logger,
        events: AsyncStream<AudioOutputEvent>.Continuation
    ) {
        _ = PipeWireLibrary.initialised
        self.configuration = configuration
        self.logger = logger
        self.events = events
        callDetection = configuration.callDetection

        threadLoop = pw_thread_loop_new("soundscaped-pw", nil)
        mainLoop = pw_thread_loop_get_loop(threadLoop)!
        // Our own module list (see ClientContext), else client-rt.conf, which
        // loads module-rt for a realtime data thread (RTKit, or RLIMIT_RTPRIO;
        // plain client.conf does not on PipeWire 0.3.x), else the default, for
        // newer releases that fold it into client.conf and drop the file.
        context =
            ClientContext.make(loop: mainLoop, logger: logger)
            ?? pw_context_new(mainLoop, makeProperties([PW_KEY_CONFIG_NAME: "client-rt.conf"]), 0)
            ?? pw_context_new(mainLoop, makeProperties([:]), 0)
        let data = pw_context_get_data_loop(context)
        dataLoop = pw_data_loop_get_loop(data)!
        // The data thread inherits its creator's name (a Swift concurrency
        // worker's); give it ours so top, perf and the benchmark say what it is.
        if let thread = pw_data_loop_get_thread(data) {
            _ = scs_set_thread_name(UInt(bitPattern: Int(bitPattern: thread)), "soundscaped-rt")
        }
        let (refillEvent, notifyEvent) = (LoopEvent(loop: dataLoop), LoopEvent(loop: mainLoop))
        self.refillEvent = refillEvent
        self.notifyEvent = notifyEvent
        commandEvent = LoopEvent(loop: mainLoop)
        let renderer = Renderer(settings: configuration.render, wake: { refillEvent.signal() })
        self.renderer = renderer
        let deadline = StallDeadline(loop: mainLoop, grace: configuration.stallGrace, renderer: renderer)
        let refills = DataThreadRefill(
            renderer: renderer, dataLoop: dataLoop,
            wakeLoopThread: { notifyEvent.signal() }, refilled: { deadline.push() })
        self.refills = refills
        cache = configuration.pcmCacheDirectory.map {
            PCMCache(directory: $0, budgetBytes: configuration.pcmCacheBudgetBytes, logger: logger)
        }

        keeper = ConnectionKeeper(
            loop: mainLoop, retryDelays: Backoff(initial: configuration.reconnectInitial, maximum: configuration.reconnectMaximum),
            logger: logger, delegate: self
        ) { [unowned self, context] () throws(StreamConnection.ConnectError) -> StreamConnection in
            try StreamConnection(context: context, configuration: configuration, renderer: renderer, output: self)
        }
        watch = ProgressWatch(
            loop: mainLoop, deadline: deadline, renderer: renderer, events: events,
            logger: logger
        ) { [unowned self] in keeper.liveConnection?.syncServer() }
        let voices = VoiceBank(ringFrames: configuration.ringFrames, cache: cache, refills: refills, logger: logger)
        playback = Playback(
            loop: mainLoop, dataLoop: dataLoop, voices: voices, renderer: renderer, watch: watch,
            events: events, logger: logger
        ) { [unowned self] in keeper.connection }

        notifyEvent.attach { [unowned self] in playback.handle(refills.takeForwarded()) }
        commandEvent.attach { [unowned self] in runCommands() }
        refillEvent.attach(loopRuns: true) { refills.run() }
        pw_thread_loop_start(threadLoop)
    }

    deinit {
        shutdown()
        pw_thread_loop_stop(threadLoop)
        notifyEvent.detach()
        commandEvent.detach()
        keeper.destroy()
        watch.destroy()
        playback.destroy()
        refillEvent.detach(loopRuns: true)
        pw_context_destroy(context)
        pw_thread_loop_destroy(threadLoop)
    }

    // MARK: Public API (any thread; returns at once)

    public func start() { post(.start) }
    public func reconnectNow(reason: String) { post(.reconnect(reason: reason)) }
    public func reactivate() { post(.reactivate) }
    public func recreateStream() { post(.recreateStream) }
    public func setTarget(_ sink: String?) { post(.setTarget(sink)) }
    public func play(_ layers: [LayerData], volume: Volume, fadeIn: FadeIn) { post(.play(layers, volume, fadeIn)) }
    public func dim(over duration: Duration) { post(.dim(duration)) }
    public func undim() { post(.undim) }
    public func setVolume(_ volume: Volume) { post(.setVolume(volume)) }
    public func stop() { post(.stop) }

    /// New rules for what counts as a call (a reload): applied at once.
    public func setCallDetection(_ detection: CallDetection) { post(.setCallDetection(detection)) }

    /// A new disk budget for decoded loops (a reload): the next loop cached keeps to it.
    public func setCacheBudget(bytes: Int64) { cache?.setBudget(bytes: bytes) }

    /// Progress counters for the watchdog; cheap and lock-free.
    public var counters: Renderer.Counters { renderer.counters }

    /// Disconnects for good; used on daemon shutdown. Waits for the loop thread.
    public func shutdown() {
        pw_thread_loop_lock(threadLoop)
        defer { pw_thread_loop_unlock(threadLoop) }
        guard !keeper.isShutDown else { return }
        playback.shutdown()
        keeper.shutdown()
    }

    private func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        // An eventfd write: it never blocks, and the loop runs the commands when it next wakes.
        commandEvent.signal()
    }

    // MARK: Commands (loop thread, lock held)

    private func runCommands() {
        let pending = commands.withLock { queued -> [Command] in
            defer { queued.removeAll() }
            return queued
        }
        for command in pending where !keeper.isShutDown {
            switch command {
            case .start: keeper.start()
            case .setCallDetection(let detection):
                callDetection = detection
                keeper.connection?.graph.setDetection(detection)
            case .reconnect(let reason): keeper.reconnect(reason: reason)
            case .reactivate: playback.reactivate()
            case .recreateStream: replaceStream()
            case .setTarget(let sink):
                linkTarget = sink
                applyLinkTarget()
            case .play(let layers, let volume, let fadeIn): playback.play(layers, volume: volume, fadeIn: fadeIn)
            case .dim(let duration): playback.dim(over: duration)
            case .undim: playback.undim()
            case .setVolume(let volume): playback.setVolume(volume)
            case .stop: playback.stop()
            }
        }
    }

    /// The watchdog's second step: a new stream on the same connection.
    private func replaceStream() {
        guard let connection = keeper.liveConnection else { return }
        logger.warning("recreating the stream")
        do {
            try connection.recreateStream(configuration: configuration)
            playback.streamReplaced()
        } catch {
            logger.error("cannot recreate the stream: \(error)")
        }
    }

    // MARK: PipeWire's callbacks (loop thread, lock held)

    func streamStateChanged(_ state: pw_stream_state, error: String?) {
        if let error { logger.warning("stream error", metadata: ["error": "\(error)"]) }
        playback.streamStateChanged(streaming: state == PW_STREAM_STATE_STREAMING)
        refreshRoute()
    }

    /// The nodes or links changed: which sink do we play to now?
    func refreshRoute() {
        updateRoute(keeper.connection?.currentRoute())
        applyLinkTarget()
    }

    /// The core echoed a sync (core `done`) that the graph monitor did not send.
    func serverAnswered(sequence: Int32) {
        watch.serverAnswered(sequence: sequence)
    }

    /// The core's error event: the server is gone.
    func serverLost(_ message: String) {
        keeper.serverLost(message)
    }

    // MARK: Helpers

    /// Links our stream to `linkTarget` through WirePlumber; applied again to every new stream node.
    private func applyLinkTarget() {
        guard let connection = keeper.connection, let node = connection.nodeID else { return }
        if let applied = linkRequested, applied.node == node, applied.sink == linkTarget { return }
        linkRequested = (node, linkTarget)
        logger.debug("linking our stream", metadata: ["node": "\(node)", "target": "\(linkTarget ?? "(default)")"])
        connection.graph.setTarget(node: node, sink: linkTarget)
    }

    private func updateRoute(_ route: String?) {
        guard route != reportedRoute else { return }
        reportedRoute = route
        events.yield(.route(route))
    }
}

extension PipeWireOutput: ConnectionKeeperDelegate {
    func connectionOpened(_ connection: StreamConnection) {
        linkRequested = nil
        connection.graph.onChange = { [events, logger] facts in
            logger.debug(
                "graph",
                metadata: [
                    "default": "\(facts.defaultSink ?? "-")",
                    "sinks": "\(facts.sinks.map(\.name))", "calls": "\(facts.communicationStreams)",
                ])
            events.yield(.graph(facts))
        }
        playback.connectionOpened()
        logger.info("connected to PipeWire")
        events.yield(.connected)
    }

    func connectionClosed() {
        playback.connectionClosed()
        updateRoute(nil)
    }

    func disconnected(reason: String) {
        events.yield(.disconnected(reason: reason))
    }
}
