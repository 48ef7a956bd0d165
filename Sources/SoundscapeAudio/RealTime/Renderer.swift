import Glibc
import SoundscapeCore
import Synchronization

/// The real-time half of the audio path: mixes the layers that play (and,
/// during a switch, the ones fading out) from their rings into PipeWire's
/// buffer, a plane per channel, with each layer's level, the user's volume,
/// the sleep timer's dimming and the play/stop fade applied in the same pass.
///
/// Each layer has a slot: a ring, the soundscape's loudness gain, the layer's
/// level (a 0…1 position on the volume curve, ramped like the volume) and its
/// place on the equal-power curve: a layer that comes in while we are audible
/// rises on sin, one that goes out falls on cos over the same length, so a
/// switch from one mix to another is an equal-power crossfade, layer by layer.
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
        /// A layer faded out; its slot is free.
        public static let slotReleased = Notification(rawValue: 1 << 2)
        /// A cycle ran while `watchForProgress` was armed: audio flows again.
        public static let progressed = Notification(rawValue: 1 << 3)
    }

    /// Slots: room for a whole mix fading in while another fades out, and a few more.
    public static let slotCount = 2 * Mix.maximumLayers + 4
    /// Planes the render writes (FL, FR): the stream offers no other layout.
    public static let channels = 2

    public let settings: RenderSettings

    // MARK: Shared with the other threads (atomics only)

    private let pending = Atomic<UInt32>(0)
    /// Bit n set while the RT thread may read slot n's ring.
    private let slotsInUseBits = Atomic<UInt32>(0)
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

    /// One layer's slot.
    private struct Slot {
        var ring: Unmanaged<SampleRing>?
        /// The soundscape's loudness gain (its manifest's).
        var gain: Float = 1
        /// The layer's level, a position on the volume curve, and where it heads.
        var level: Float = 1
        var levelTarget: Float = 1
        /// Frames into the equal-power curve: 0 is silent, `crossfadeFrames` full.
        var position = 0
        /// +1 fading in, −1 fading out (released at 0), 0 steady.
        var heading = 0

        var isSteady: Bool { heading == 0 && level == levelTarget }
    }

    private struct RTState {
        /// Bit n set while slot n holds a layer (the RT copy of `slotsInUseBits`).
        var used: UInt32 = 0
        /// Volume position 0…1 (before the cubic curve) and where it heads.
        var volume: Float = 0
        var volumeTarget: Float = 0
        /// The sleep timer's dimming: a position on the volume curve, where it
        /// heads, and the step per frame that gets it there in the time asked.
        var dim: Float = 1
        var dimTarget: Float = 1
        var dimStep: Float = 1
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

        var audible: Bool { used != 0 && (running || fade > 0) }
        var masterSteady: Bool { volume == volumeTarget && dim == dimTarget && (running ? fade == 1 : fade == 0) }
    }

    private let rt: UnsafeMutablePointer<RTState>
    private let slots: UnsafeMutablePointer<Slot>

    public init(settings: RenderSettings, wake: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.wake = wake
        rt = .allocate(capacity: 1)
        var state = RTState()
        state.fadeInFrames = settings.fadeInFrames
        rt.initialize(to: state)
        slots = .allocate(capacity: Self.slotCount)
        slots.initialize(repeating: Slot(), count: Self.slotCount)
    }

    deinit {
        rt.deinitialize(count: 1)
        rt.deallocate()
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
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

    /// Makes `slot` the one soundscape to hear: every other layer goes out, at
    /// once while silent, by crossfade while audible.
    public func applyVoice(slot: Int, ring: SampleRing, gain: Float) {
        for other in 0..<Self.slotCount where other != slot { applyLayerOut(slot: other) }
        applyLayer(slot: slot, ring: ring, gain: gain, level: 1)
    }

    /// Adds a layer in `slot` at `level` (a 0…1 position on the volume curve):
    /// at once while silent, rising on the equal-power curve while audible.
    public func applyLayer(slot: Int, ring: SampleRing, gain: Float, level: Float) {
        precondition((0..<Self.slotCount).contains(slot))
        let audible = rt.pointee.audible
        let level = min(max(level, 0), 1)
        slots[slot] = Slot(
            ring: .passUnretained(ring), gain: gain, level: level, levelTarget: level,
            position: audible ? 0 : settings.crossfadeFrames, heading: audible ? 1 : 0)
        rt.pointee.used |= 1 << UInt32(slot)
        slotsInUseBits.bitwiseOr(1 << UInt32(slot), ordering: .releasing)
    }

    /// Moves a layer's level (a 0…1 position on the volume curve) at the volume's pace.
    public func applyLevel(slot: Int, level: Float) {
        guard rt.pointee.used & (1 << UInt32(slot)) != 0 else { return }
        slots[slot].levelTarget = min(max(level, 0), 1)
        if !rt.pointee.audible { slots[slot].level = slots[slot].levelTarget }
    }

    /// Takes a layer out: at once while silent, falling on the equal-power curve
    /// while audible (from where it is, if it was still coming in).
    public func applyLayerOut(slot: Int) {
        guard rt.pointee.used & (1 << UInt32(slot)) != 0 else { return }
        if rt.pointee.audible && slots[slot].position > 0 {
            slots[slot].heading = -1
        } else {
            release(slot: slot)
        }
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

    /// The sleep timer's dimming: moves to `position` (1 undimmed, 0 silent, on
    /// the volume curve) evenly over `frames`, or at once for 0 frames.
    public func applyDim(position: Float, frames: Int) {
        let target = min(max(position, 0), 1)
        rt.pointee.dimTarget = target
        if frames <= 0 {
            rt.pointee.dim = target
            rt.pointee.dimStep = 1
        } else {
            rt.pointee.dimStep = max(abs(target - rt.pointee.dim) / Float(frames), .leastNormalMagnitude)
        }
    }

    /// Bit n set when slot n is being rendered and its ring is below half full.
    /// Data thread only (it reads the render state).
    func slotsBelowHalf() -> UInt32 {
        var bits: UInt32 = 0
        var used = rt.pointee.used
        while used != 0 {
            let index = used.trailingZeroBitCount
            used &= used - 1
            guard let ring = slots[index].ring else { continue }
            if ring._withUnsafeGuaranteedRef({ $0.availableFrames < $0.capacity / 2 }) { bits |= 1 << UInt32(index) }
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
        var notify: UInt32 = 0

        if !rt.pointee.audible {
            // Silent: leave the rings alone so a resume continues where the fade-out ended.
            output.silence(frames: frames)
        } else if rt.pointee.masterSteady && allSlotsSteady() {
            notify |= renderSteady(into: output, frames: frames)
        } else {
            notify |= renderMoving(into: output, frames: frames)
        }

        if !rt.pointee.running && rt.pointee.fade == 0 && !rt.pointee.fadedOutReported {
            rt.pointee.fadedOutReported = true
            notify |= Notification.fadedOut.rawValue
        }

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

    @inline(__always)
    private func allSlotsSteady() -> Bool {
        var used = rt.pointee.used
        while used != 0 {
            let index = used.trailingZeroBitCount
            used &= used - 1
            if !slots[index].isSteady { return false }
        }
        return true
    }

    /// Nothing moves: each layer is copied (the first) or added (the rest) at
    /// one constant gain, the master's folded in, in a single pass per layer.
    private func renderSteady(into output: Planes, frames: Int) -> UInt32 {
        let state = rt.pointee
        let master = Self.gain(volume: state.volume, fade: state.fade, linear: state.linearFade) * Self.dimGain(state.dim)
        var notify: UInt32 = 0
        var first = true
        var used = state.used
        while used != 0 {
            let index = used.trailingZeroBitCount
            used &= used - 1
            let slot = slots[index]
            guard let ring = slot.ring else { continue }
            let gain = master * (slot.gain * Volume.gain(forPosition: slot.level))
            let copy = first
            let got = ring._withUnsafeGuaranteedRef { ring in
                ring.consume(frames: frames) { source, run, offset in
                    let (left, right) = (output.left + offset, output.right + offset)
                    if copy {
                        planeMixCopy(source, frames: run, gain: gain, left: left, right: right)
                    } else {
                        planeMixAdd(source, frames: run, gain: gain, left: left, right: right)
                    }
                }
            }
            notify |= finish(ring: ring, produced: got, of: frames, into: copy ? output : nil)
            first = false
        }
        if first { output.silence(frames: frames) }
        return notify
    }

    /// Something moves (a layer coming in or going out, a level, the volume, the
    /// dimming, a fade): each layer is added on its own curve under the master
    /// gain as it ramps, frame by frame, the same steps for every layer.
    private func renderMoving(into output: Planes, frames: Int) -> UInt32 {
        var notify: UInt32 = 0
        output.silence(frames: frames)
        let start = Master(rt.pointee)
        var used = rt.pointee.used
        while used != 0 {
            let index = used.trailingZeroBitCount
            used &= used - 1
            notify |= mix(slot: index, under: start, into: output, frames: frames)
        }
        var master = start
        for _ in 0..<frames { _ = master.step(settings) }
        master.store(into: &rt.pointee)
        return notify
    }

    /// Adds one layer into `output`: its loudness gain, its level as it ramps, its
    /// place on the equal-power curve as it comes in or goes out, and the master gain.
    private func mix(slot index: Int, under start: Master, into output: Planes, frames: Int) -> UInt32 {
        var slot = slots[index]
        guard let ring = slot.ring else { return 0 }
        let settings = self.settings
        let length = settings.crossfadeFrames
        let levelStep = 1 / Float(settings.volumeRampFrames)
        var master = start
        // A layer at its level, fully in, while others move: its own factor is one
        // constant (sin of the curve's end is exactly 1), so only the master steps per frame.
        let steady = slot.isSteady && slot.position == length
        let factor = slot.gain * Volume.gain(forPosition: slot.level)
        let got = ring._withUnsafeGuaranteedRef { ring in
            ring.consume(frames: frames) { source, run, offset in
                let (left, right) = (output.left + offset, output.right + offset)
                if steady {
                    for frame in 0..<run {
                        let gain = master.step(settings) * factor
                        left[frame] += source[frame * 2] * gain
                        right[frame] += source[frame * 2 + 1] * gain
                    }
                    return
                }
                for frame in 0..<run {
                    let masterGain = master.step(settings)
                    let angle = Float(slot.position) / Float(length) * (Float.pi / 2)
                    let gain = masterGain * (slot.gain * Volume.gain(forPosition: slot.level) * sinf(angle))
                    left[frame] += source[frame * 2] * gain
                    right[frame] += source[frame * 2 + 1] * gain
                    Self.step(&slot.level, toward: slot.levelTarget, by: levelStep)
                    slot.position = min(max(slot.position + slot.heading, 0), length)
                }
            }
        }
        // The frames an underrun left out still move the curve, so a layer's fade keeps its time.
        let missing = frames - got
        if missing > 0 {
            slot.position = min(max(slot.position + slot.heading * missing, 0), length)
            let levelFrames = Float(missing) * levelStep
            Self.step(&slot.level, toward: slot.levelTarget, by: levelFrames)
        }
        var notify = finish(ring: ring, produced: got, of: frames, into: nil)
        if slot.heading > 0 && slot.position == length { slot.heading = 0 }
        slots[index] = slot
        if slot.heading < 0 && slot.position == 0 {
            release(slot: index)
            notify |= Notification.slotReleased.rawValue
        }
        return notify
    }

    /// The master gain's moving parts (volume, play/stop fade, dimming), stepped a
    /// frame at a time: a copy per layer, so every layer hears the same ramp.
    private struct Master {
        var volume: Float
        let volumeTarget: Float
        var fade: Float
        let running: Bool
        let fadeInFrames: Int
        var linearFade: Bool
        var dim: Float
        let dimTarget: Float
        let dimStep: Float

        init(_ state: RTState) {
            volume = state.volume
            volumeTarget = state.volumeTarget
            fade = state.fade
            running = state.running
            fadeInFrames = state.fadeInFrames
            linearFade = state.linearFade
            dim = state.dim
            dimTarget = state.dimTarget
            dimStep = state.dimStep
        }

        /// Steps one frame and returns that frame's gain.
        @inline(__always)
        mutating func step(_ settings: RenderSettings) -> Float {
            Renderer.step(&volume, toward: volumeTarget, by: 1 / Float(settings.volumeRampFrames))
            Renderer.step(
                &fade, toward: running ? 1 : 0,
                by: 1 / Float(running ? fadeInFrames : settings.fadeOutFrames))
            Renderer.step(&dim, toward: dimTarget, by: dimStep)
            return Renderer.gain(volume: volume, fade: fade, linear: linearFade) * Renderer.dimGain(dim)
        }

        func store(into state: inout RTState) {
            state.volume = volume
            state.fade = fade
            state.dim = dim
            state.linearFade = fade >= 1 ? false : linearFade
        }
    }

    /// The gain of a volume position under the play/stop fade. The fade scales the
    /// position before the cubic curve, which makes the user's play and stop gentle;
    /// for a prompt return it scales the gain itself, so that its 40 ms are heard from
    /// the first of them (on the curve the first 17 ms of a return stay below −60 dBFS
    /// at 60 % volume, a dropout after every fault for a keep-alive) and still do not
    /// click. At the fade's ends the two are the same.
    @inline(__always)
    fileprivate static func gain(volume: Float, fade: Float, linear: Bool) -> Float {
        linear ? Volume.gain(forPosition: volume) * fade : Volume.gain(forPosition: volume * fade)
    }

    /// The sleep timer's dimming on the volume curve: a long fade that sounds even.
    @inline(__always)
    fileprivate static func dimGain(_ dim: Float) -> Float {
        dim == 1 ? 1 : Volume.gain(forPosition: dim)
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
    fileprivate static func step(_ value: inout Float, toward target: Float, by step: Float) {
        if value < target {
            value = min(value + step, target)
        } else if value > target {
            value = max(value - step, target)
        }
    }

    // MARK: Slot bookkeeping

    private func release(slot: Int) {
        slots[slot] = Slot()
        rt.pointee.used &= ~(1 << UInt32(slot))
        slotsInUseBits.bitwiseAnd(~(1 << UInt32(slot)), ordering: .releasing)
    }
}
