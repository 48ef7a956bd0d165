import Glibc
import SoundscapeCore
import Synchronization

/// The real-time half of the audio path: mixes the playing soundscape (and,
/// during a switch, the outgoing one) from their rings into PipeWire's buffer,
/// a plane per channel, with the user's volume and the play/stop fade applied in
/// the same pass.
///
/// Everything in `render` and the `apply…` commands runs on PipeWire's data
/// thread only (the loop thread's commands arrive through `pw_loop_invoke`,
/// serialised with `process`), so the RT state needs no locks. Facts flow back
/// through atomics plus one eventfd signal on the data loop, coalesced so a
/// cycle signals at most once; `DataThreadRefill` takes them there, after the
/// cycle, and forwards to the loop thread what it does not handle itself.
public final class Renderer: @unchecked Sendable {
    /// Bits in `pending`, taken by `DataThreadRefill` on the data thread.
    public struct Notification: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// A ring dropped below half full.
        public static let refill = Notification(rawValue: 1 << 0)
        /// A stop's fade-out reached silence.
        public static let fadedOut = Notification(rawValue: 1 << 1)
        /// A crossfade finished; the outgoing slot is free.
        public static let slotReleased = Notification(rawValue: 1 << 2)
        /// A cycle ran while `watchForProgress` was armed: audio flows again.
        public static let progressed = Notification(rawValue: 1 << 3)
    }

    public static let slotCount = 2
    /// Planes the render writes (FL, FR): the stream offers no other layout.
    public static let channels = 2

    public let settings: RenderSettings

    // MARK: Shared with the other threads (atomics only)

    private let pending = Atomic<UInt32>(0)
    /// Bit n set while the RT thread may read slot n's ring.
    private let slotsInUseBits = Atomic<UInt8>(0)
    private let framesRenderedTotal = Atomic<Int>(0)
    private let cyclesTotal = Atomic<Int>(0)
    private let underrunFramesTotal = Atomic<Int>(0)
    /// Armed by the loop thread (`ProgressWatch`) while it believes audio has stalled; the next
    /// cycle disarms it and reports `.progressed`. One atomic load per cycle.
    private let progressWatch = Atomic<Bool>(false)
    /// Called (on the RT thread) when a notification bit goes from clear to set.
    /// Must be real-time safe: PipeWire's `pw_loop_signal_event` writes an eventfd.
    private let wake: @Sendable () -> Void

    // MARK: RT-owned state

    private struct Slot {
        var ring: Unmanaged<SampleRing>?
        var gain: Float = 1
    }

    private struct RTState {
        var slots: (Slot, Slot) = (Slot(), Slot())
        /// Slot heard now (or fading out during a crossfade), or -1.
        var current = -1
        /// Slot fading in during a crossfade, or -1.
        var incoming = -1
        var crossfadePosition = 0
        /// Volume position 0…1 (before the cubic curve) and where it heads.
        var volume: Float = 0
        var volumeTarget: Float = 0
        /// Play/stop fade 0…1 and whether we head up or down.
        var fade: Float = 0
        var running = false
        /// The pace of the fade-in under way (`FadeIn`), set when a start begins.
        var fadeInFrames = 1
        /// The fade scales the gain, not the volume position (see `gain(volume:fade:linear:)`):
        /// chosen when a start leaves silence, kept until the fade is full again (where
        /// the two agree), so that no change of shape ever steps the gain.
        var linearFade = false
        var fadedOutReported = true
    }

    private let rt: UnsafeMutablePointer<RTState>

    public init(settings: RenderSettings, wake: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.wake = wake
        rt = .allocate(capacity: 1)
        var state = RTState()
        state.fadeInFrames = settings.fadeInFrames
        rt.initialize(to: state)
    }

    deinit {
        rt.deinitialize(count: 1)
        rt.deallocate()
    }

    // MARK: The other threads' view

    /// Takes and clears the pending notifications.
    public func takeNotifications() -> Notification {
        Notification(rawValue: pending.exchange(0, ordering: .acquiringAndReleasing))
    }

    /// Slots the RT thread may still read; the loop thread (`VoiceBank`)
    /// prepares and releases only slots outside this set.
    public var slotsInUse: Set<Int> {
        let bits = slotsInUseBits.load(ordering: .acquiring)
        return Set((0..<Self.slotCount).filter { bits & (1 << $0) != 0 })
    }

    public struct Counters: Sendable, Equatable {
        public var frames: Int
        public var cycles: Int
        public var underrunFrames: Int
    }

    /// Monotonic progress counters, for the watchdog and the benchmark.
    public var counters: Counters {
        Counters(
            frames: framesRenderedTotal.load(ordering: .relaxed),
            cycles: cyclesTotal.load(ordering: .relaxed),
            underrunFrames: underrunFramesTotal.load(ordering: .relaxed))
    }

    /// Asks for one `.progressed` notification on the next cycle.
    public func watchForProgress() {
        progressWatch.store(true, ordering: .releasing)
    }

    // MARK: Commands (run on the RT thread, between cycles)

    /// Makes `slot` the soundscape to hear: at once while silent, by crossfade while audible.
    public func applyVoice(slot: Int, ring: SampleRing, gain: Float) {
        precondition((0..<Self.slotCount).contains(slot))
        var state = rt.pointee
        if state.incoming >= 0 {
            // A switch during a switch: the half-faded-in voice becomes the one we leave.
            release(slot: state.current, in: &state)
            state.current = state.incoming
            state.incoming = -1
        }
        if state.current == slot {
            // Replacing the voice we hear (only done while silent): no crossfade possible.
            state.current = -1
        }
        setSlot(slot, Slot(ring: .passUnretained(ring), gain: gain), in: &state)
        markInUse(slot)
        let audible = state.current >= 0 && (state.running || state.fade > 0)
        if audible {
            state.incoming = slot
            state.crossfadePosition = 0
        } else {
            release(slot: state.current, in: &state)
            state.current = slot
        }
        rt.pointee = state
    }

    /// Starts (fading in at `fadeIn`'s pace) or fades out. A start while
    /// already running keeps the pace of the fade-in under way.
    public func applyRunning(_ running: Bool, fadeIn: FadeIn = .gentle) {
        if running && !rt.pointee.running {
            rt.pointee.fadeInFrames = settings.fadeInFrames(fadeIn)
            // From silence the shape is the new fade's; rising again from a fade-out keeps its own.
            if rt.pointee.fade == 0 { rt.pointee.linearFade = fadeIn == .prompt }
        }
        rt.pointee.running = running
        if !running { rt.pointee.fadedOutReported = false }
    }

    /// Jumps the play/stop fade; 0 makes the next start fade in from silence.
    public func applyFadeLevel(_ level: Float) {
        rt.pointee.fade = min(max(level, 0), 1)
        if level >= 1 { rt.pointee.linearFade = false }
        if level == 0 { rt.pointee.fadedOutReported = true }
    }

    /// `position` is the user's volume on 0…1, before the cubic curve.
    public func applyVolume(position: Float, immediately: Bool = false) {
        rt.pointee.volumeTarget = min(max(position, 0), 1)
        if immediately { rt.pointee.volume = rt.pointee.volumeTarget }
    }

    /// Bit n set when slot n is being rendered and its ring is below half full.
    /// Data thread only (it reads the render state).
    func slotsBelowHalf() -> UInt8 {
        let state = rt.pointee
        var bits: UInt8 = 0
        for index in 0..<Self.slotCount where index == state.current || index == state.incoming {
            guard let ring = slot(index, in: state).ring else { continue }
            if ring._withUnsafeGuaranteedRef({ $0.availableFrames < $0.capacity / 2 }) { bits |= 1 << index }
        }
        return bits
    }

    // MARK: The real-time render

    /// Two planes of `frames` samples each, the stream's buffer as PipeWire maps it
    /// (planar F32, the graph's own format): the rings' interleaved frames are split
    /// into them by the same pass that applies the gain.
    public struct Planes {
        public let left: UnsafeMutablePointer<Float>
        public let right: UnsafeMutablePointer<Float>

        public init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
            self.left = left
            self.right = right
        }

        /// The same planes from frame `offset` on.
        @inline(__always)
        func advanced(by offset: Int) -> Planes {
            Planes(left: left + offset, right: right + offset)
        }

        @inline(__always)
        func silence(frames: Int) {
            left.update(repeating: 0, count: frames)
            right.update(repeating: 0, count: frames)
        }
    }

    /// Fills `frames` stereo frames, one plane per channel. Real-time safe: no locks,
    /// no allocation, no system calls except the coalesced wake-up.
    public func render(into output: Planes, frames: Int) {
        var state = rt.pointee
        var notify: UInt32 = 0

        if state.current < 0 || (!state.running && state.fade == 0) {
            // Silent: leave the rings alone so a resume continues where the fade-out ended.
            output.silence(frames: frames)
        } else if state.incoming < 0 {
            notify |= renderSteady(into: output, frames: frames, state: &state)
        } else {
            notify |= renderCrossfade(into: output, frames: frames, state: &state)
        }

        if !state.running && state.fade == 0 && !state.fadedOutReported {
            state.fadedOutReported = true
            notify |= Notification.fadedOut.rawValue
        }
        rt.pointee = state

        framesRenderedTotal.add(frames, ordering: .relaxed)
        cyclesTotal.add(1, ordering: .relaxed)
        if progressWatch.load(ordering: .relaxed), progressWatch.exchange(false, ordering: .acquiringAndReleasing) {
            notify |= Notification.progressed.rawValue
        }
        if notify != 0 {
            let before = pending.bitwiseOr(notify, ordering: .acquiringAndReleasing).oldValue
            if before & notify != notify { wake() }
        }
    }

    /// One voice: copy from its ring and apply gain in the same pass.
    private func renderSteady(into output: Planes, frames: Int, state: inout RTState) -> UInt32 {
        let slot = self.slot(state.current, in: state)
        guard let ring = slot.ring else {
            output.silence(frames: frames)
            return 0
        }
        var volume = state.volume
        var fade = state.fade
        let settings = self.settings
        let voiceGain = slot.gain
        let volumeTarget = state.volumeTarget
        let running = state.running
        let fadeInFrames = state.fadeInFrames
        let linear = state.linearFade
        let got = ring._withUnsafeGuaranteedRef { ring in
            ring.consume(frames: frames) { source, run, offset in
                let (left, right) = (output.left + offset, output.right + offset)
                if volume == volumeTarget && (running ? fade == 1 : fade == 0) {
                    let gain = Self.gain(volume: volume, fade: fade, linear: linear) * voiceGain
                    for frame in 0..<run {
                        left[frame] = source[frame * 2] * gain
                        right[frame] = source[frame * 2 + 1] * gain
                    }
                } else {
                    for frame in 0..<run {
                        Self.step(&volume, toward: volumeTarget, by: 1 / Float(settings.volumeRampFrames))
                        Self.step(
                            &fade, toward: running ? 1 : 0,
                            by: 1 / Float(running ? fadeInFrames : settings.fadeOutFrames))
                        let gain = Self.gain(volume: volume, fade: fade, linear: linear) * voiceGain
                        left[frame] = source[frame * 2] * gain
                        right[frame] = source[frame * 2 + 1] * gain
                    }
                }
            }
        }
        state.volume = volume
        state.fade = fade
        if fade >= 1 { state.linearFade = false }
        return finish(ring: ring, produced: got, of: frames, into: output)
    }

    /// Two voices: equal-power crossfade, then the master gain in a second pass.
    private func renderCrossfade(into output: Planes, frames: Int, state: inout RTState) -> UInt32 {
        var notify: UInt32 = 0
        let outgoing = slot(state.current, in: state)
        let incoming = slot(state.incoming, in: state)
        let length = settings.crossfadeFrames
        let start = state.crossfadePosition
        output.silence(frames: frames)

        notify |= mix(incoming, fadingIn: true, from: start, of: length, into: output, frames: frames)
        notify |= mix(outgoing, fadingIn: false, from: start, of: length, into: output, frames: frames)

        state.crossfadePosition = start + frames
        if state.crossfadePosition >= length {
            release(slot: state.current, in: &state)
            state.current = state.incoming
            state.incoming = -1
            notify |= Notification.slotReleased.rawValue
        }
        applyMasterGain(to: output, frames: frames, state: &state)
        return notify
    }

    /// Adds one voice of a crossfade into `output` on its half of the equal-power curve.
    private func mix(
        _ voice: Slot, fadingIn: Bool, from start: Int, of length: Int,
        into output: Planes, frames: Int
    ) -> UInt32 {
        guard let ring = voice.ring else { return 0 }
        let got = ring._withUnsafeGuaranteedRef { ring in
            ring.consume(frames: frames) { source, run, offset in
                let (left, right) = (output.left + offset, output.right + offset)
                for frame in 0..<run {
                    let position = min(start + offset + frame, length)
                    let angle = Float(position) / Float(length) * (Float.pi / 2)
                    let gain = (fadingIn ? sinf(angle) : cosf(angle)) * voice.gain
                    left[frame] += source[frame * 2] * gain
                    right[frame] += source[frame * 2 + 1] * gain
                }
            }
        }
        return finish(ring: ring, produced: got, of: frames, into: nil)
    }

    private func applyMasterGain(to output: Planes, frames: Int, state: inout RTState) {
        let rampStep = 1 / Float(settings.volumeRampFrames)
        let fadeStep = 1 / Float(state.running ? state.fadeInFrames : settings.fadeOutFrames)
        let fadeTarget: Float = state.running ? 1 : 0
        for frame in 0..<frames {
            Self.step(&state.volume, toward: state.volumeTarget, by: rampStep)
            Self.step(&state.fade, toward: fadeTarget, by: fadeStep)
            let gain = Self.gain(volume: state.volume, fade: state.fade, linear: state.linearFade)
            output.left[frame] *= gain
            output.right[frame] *= gain
        }
        if state.fade >= 1 { state.linearFade = false }
    }

    /// The gain of a volume position under the play/stop fade. The fade scales the
    /// position before the cubic curve, which makes the user's play and stop gentle;
    /// for a prompt return it scales the gain itself, so that its 40 ms are heard from
    /// the first of them (on the curve the first 17 ms of a return stay below −60 dBFS
    /// at 60 % volume, a dropout after every fault for a keep-alive) and still do not
    /// click. At the fade's ends the two are the same.
    @inline(__always)
    private static func gain(volume: Float, fade: Float, linear: Bool) -> Float {
        linear ? Volume.gain(forPosition: volume) * fade : Volume.gain(forPosition: volume * fade)
    }

    /// Accounts for an underrun (silence for the missing part) and asks for a refill below half full.
    @inline(__always)
    private func finish(
        ring: Unmanaged<SampleRing>, produced: Int, of frames: Int,
        into output: Planes?
    ) -> UInt32 {
        var notify: UInt32 = 0
        if produced < frames {
            output?.advanced(by: produced).silence(frames: frames - produced)
            underrunFramesTotal.add(frames - produced, ordering: .relaxed)
        }
        let low = ring._withUnsafeGuaranteedRef { $0.availableFrames < $0.capacity / 2 }
        if low { notify |= Notification.refill.rawValue }
        return notify
    }

    @inline(__always)
    private static func step(_ value: inout Float, toward target: Float, by step: Float) {
        if value < target {
            value = min(value + step, target)
        } else if value > target {
            value = max(value - step, target)
        }
    }

    // MARK: Slot bookkeeping

    private func slot(_ index: Int, in state: RTState) -> Slot {
        index == 0 ? state.slots.0 : state.slots.1
    }

    private func setSlot(_ index: Int, _ slot: Slot, in state: inout RTState) {
        if index == 0 { state.slots.0 = slot } else { state.slots.1 = slot }
    }

    private func markInUse(_ slot: Int) {
        slotsInUseBits.bitwiseOr(UInt8(1 << slot), ordering: .releasing)
    }

    private func release(slot: Int, in state: inout RTState) {
        guard slot >= 0 else { return }
        setSlot(slot, Slot(), in: &state)
        slotsInUseBits.bitwiseAnd(~UInt8(1 << slot), ordering: .releasing)
    }
}
