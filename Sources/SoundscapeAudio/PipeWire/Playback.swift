import CPipeWire
import Logging
import SoundscapeCore

/// Voices and fades, and whether our stream runs: what the output's `play`,
/// `setVolume` and `stop` become. A play loads the soundscape into a voice
/// (`VoiceBank`) and fades in or crossfades; a stop fades out and then makes
/// the stream inactive, so the graph stops scheduling us and the sink may
/// suspend. The renderer is told through `pw_loop_invoke` on the data loop,
/// serialised with its cycles.
///
/// Loop thread only, with the thread loop's lock held.
final class Playback {
    /// What the renderer was last told to do with the sound.
    enum Intent: Equatable {
        /// Silent, the stream inactive (or on its way there).
        case stopped
        /// Fading in, crossfading or steady.
        case playing
        /// Fading out; the stream goes inactive once the renderer reports the
        /// fade done, or the stop timer says it will not.
        case fadingOut
    }

    private(set) var intent = Intent.stopped
    /// What we last asked of `pw_stream_set_active`: whether PipeWire may schedule our stream.
    private(set) var requestedActive = false
    /// What the player last heard in `.streaming`: whether the graph runs our stream.
    private(set) var reportedStreaming = false
    /// A mix waiting for slots (crossfades under way hold them); the latest request wins.
    private var queuedMix: [LayerData]?
    /// A mix started out of silence whose other layers are loaded once the graph runs the stream.
    private var deferredMix: [LayerData]?
    /// Ends a fade-out the graph no longer runs cycles for.
    private var stopTimer: LoopTimer!

    private let voices: VoiceBank
    private let renderer: Renderer
    private let dataLoop: UnsafeMutablePointer<pw_loop>
    private let watch: ProgressWatch
    private let fadeOutBound: Duration
    private let events: AsyncStream<AudioOutputEvent>.Continuation
    private let logger: Logger
    /// The current connection, if any (lost ones included, as PipeWire still takes calls on them).
    private let connection: () -> StreamConnection?

    init(
        loop: UnsafeMutablePointer<pw_loop>, dataLoop: UnsafeMutablePointer<pw_loop>, voices: VoiceBank,
        renderer: Renderer, watch: ProgressWatch, events: AsyncStream<AudioOutputEvent>.Continuation,
        logger: Logger, connection: @escaping () -> StreamConnection?
    ) {
        self.dataLoop = dataLoop
        self.voices = voices
        self.renderer = renderer
        self.watch = watch
        self.events = events
        self.logger = logger
        self.connection = connection
        fadeOutBound = .milliseconds(renderer.settings.fadeOutFrames * 1000 / RenderSettings.sampleRate) + .seconds(1)
        stopTimer = LoopTimer(loop: loop) { [unowned self] in finishStop(reason: "fade-out timed out") }
    }

    func destroy() {
        stopTimer.destroy()
    }

    // MARK: Commands

    /// Plays the layers at `volume`: fades in from silence; while audible, a
    /// layer that stays changes level, a new one fades in, the others fade out.
    /// Playing what already plays only makes sure it runs.
    func play(_ layers: [LayerData], volume: Volume, fadeIn: FadeIn) {
        let fromSilence = !requestedActive
        intent = .playing
        stopTimer.disarm()
        applyMix(layers)
        let (renderer, position) = (self.renderer, Float(volume.percent) / 100)
        runBlocking(on: dataLoop) {
            renderer.applyVolume(position: position, immediately: fromSilence)
            renderer.applyRunning(true, fadeIn: fadeIn)
        }
        activate(true)
    }

    func setVolume(_ volume: Volume) {
        let (renderer, position) = (self.renderer, Float(volume.percent) / 100)
        runBlocking(on: dataLoop) { renderer.applyVolume(position: position) }
    }

    /// The sleep timer's fade to silence, evenly over `duration`.
    func dim(over duration: Duration) {
        let (renderer, frames) = (self.renderer, RenderSettings.frames(duration))
        runBlocking(on: dataLoop) { renderer.applyDim(position: 0, frames: duration == .zero ? 0 : frames) }
    }

    /// Back to full after the sleep timer, over a volume ramp (never a step).
    func undim() {
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applyDim(position: 1, frames: renderer.settings.volumeRampFrames) }
    }

    /// Fades out, then makes the stream inactive; reports `.stopped` when done.
    func stop() {
        intent = .fadingOut
        queuedMix = nil
        deferredMix = nil
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applyRunning(false) }
        if requestedActive && reportedStreaming {
            // The fade needs cycles to run; if the graph stops calling us the timer ends it.
            stopTimer.arm(after: fadeOutBound)
        } else {
            finishStop(reason: nil)
        }
    }

    /// The watchdog's first step: make the stream inactive and active again,
    /// which makes PipeWire re-negotiate its scheduling.
    func reactivate() {
        guard let connection = connection(), requestedActive else { return }
        logger.warning("reactivating the stream")
        connection.setActive(false)
        connection.setActive(true)
        watch.start()
    }

    // MARK: Facts

    /// The renderer's news, forwarded by the data thread.
    func handle(_ notifications: Renderer.Notification) {
        if notifications.contains(.slotReleased) {
            voices.releaseUnused(slotsInUse: renderer.slotsInUse)
            if let next = queuedMix { applyMix(next) }
        }
        if notifications.contains(.refill) {
            for failure in voices.refill() { events.yield(.decodeFailed(failure)) }
            if requestedActive { watch.refilled() }
        }
        if notifications.contains(.progressed) {
            watch.cycleRan()
        }
        if notifications.contains(.fadedOut) {
            finishStop(reason: nil)
        }
    }

    /// What the stream's state says of whether the graph runs us.
    func streamStateChanged(streaming: Bool) {
        report(streaming: streaming)
    }

    /// A new connection: its stream starts inactive.
    func connectionOpened() {
        requestedActive = false
        reportedStreaming = false
    }

    /// The connection is gone: silence at once (no fade without cycles).
    func connectionClosed() {
        requestedActive = false
        report(streaming: false)
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applySilence() }
        watch.connectionDropped()
        if intent != .playing { stopTimer.disarm() }
    }

    /// The watchdog's second step replaced the stream, which starts inactive.
    func streamReplaced() {
        requestedActive = false
        report(streaming: false)
        if intent == .playing { activate(true) } else { watch.stop() }
    }

    /// Daemon shutdown: no stop is finished any more.
    func shutdown() {
        stopTimer.disarm()
    }

    // MARK: Helpers

    /// Moves the renderer to `layers`: a layer already heard changes level (a
    /// soundscape never cross-fades into a copy of itself restarted from frame 0),
    /// a new one is loaded into a free slot and comes in, the rest go out. All
    /// in one command to the data thread, so they move together.
    ///
    /// Out of silence, only one layer is loaded before the stream is asked to
    /// run (none if one is loaded already): the player answers Play once the
    /// graph runs the stream, and loading a layer (its ring filled from the PCM
    /// cache, about 0.25 ms) would hold that up for every layer of a mix. The
    /// others are loaded the moment the stream runs (nearly always before its
    /// first cycle; else they come in as a layer added to what plays does, a
    /// cycle later); a layer that fails then is reported as one that fails at
    /// any other time, with its reason.
    private func applyMix(_ layers: [LayerData]) {
        deferredMix = nil
        var incoming = layers.filter { voices.targets[$0.data.id] == nil }
        guard voices.freeSlots(slotsInUse: renderer.slotsInUse).count >= incoming.count else {
            // Crossfades under way hold the slots; the latest request wins when one ends.
            queuedMix = layers
            return
        }
        queuedMix = nil
        if !reportedStreaming {
            let now = incoming.prefix(incoming.count == layers.count ? 1 : 0)
            if now.count < incoming.count { deferredMix = layers }
            incoming = Array(now)
        }
        let wanted = Set(layers.map(\.data.id))
        let outgoing = voices.targets.filter { !wanted.contains($0.key) }.map(\.value)
        for (id, _) in voices.targets where !wanted.contains(id) { voices.dropTarget(id) }
        let levels = layers.compactMap { layer in voices.targets[layer.data.id].map { ($0, layer.position) } }
        var added: [(slot: Int, ring: SampleRing, gain: Float, level: Float)] = []
        for layer in incoming {
            do {
                guard let slot = try voices.prepare(layer.data, slotsInUse: renderer.slotsInUse) else { break }
                voices.makeTarget(slot)
                added.append((slot, voices.ring(slot), layer.data.gain, layer.position))
            } catch {
                events.yield(.decodeFailed(error))
            }
        }
        let renderer = self.renderer
        // Index loops: an array's iterator allocates on the data thread in a debug build.
        runBlocking(on: dataLoop) {
            for index in outgoing.indices { renderer.applyLayerOut(slot: outgoing[index]) }
            for index in levels.indices { renderer.applyLevel(slot: levels[index].0, level: levels[index].1) }
            for index in added.indices {
                let layer = added[index]
                renderer.applyLayer(slot: layer.slot, ring: layer.ring, gain: layer.gain, level: layer.level)
            }
        }
        // Slots let go of at once (while silent) are free again now.
        voices.releaseUnused(slotsInUse: renderer.slotsInUse)
    }

    private func finishStop(reason: String?) {
        stopTimer.disarm()
        guard intent == .fadingOut else { return }
        if let reason { logger.debug("stopping without a completed fade", metadata: ["reason": "\(reason)"]) }
        intent = .stopped
        let renderer = self.renderer
        runBlocking(on: dataLoop) { renderer.applySilence() }
        activate(false)
        // An inactive stream is not streaming; say so before `.stopped`, so nobody
        // believes a stream that is about to pause still runs.
        report(streaming: false)
        events.yield(.stopped)
    }

    private func activate(_ on: Bool) {
        guard let connection = connection() else {
            requestedActive = false
            watch.stop()
            return
        }
        if requestedActive != on {
            requestedActive = on
            connection.setActive(on)
        }
        if on { watch.start() } else { watch.stop() }
    }

    private func report(streaming: Bool) {
        guard streaming != reportedStreaming else { return }
        reportedStreaming = streaming
        events.yield(.streaming(streaming))
        if streaming, intent == .playing, let deferred = deferredMix { applyMix(deferred) }
    }
}

extension Renderer {
    /// Stops at once (no fade): used when the stream goes away or is made inactive.
    func applySilence() {
        applyRunning(false)
        applyFadeLevel(0)
    }
}
