import Logging
import SoundscapeCore

/// The control-thread side of the renderer's slots: the loop source (cache
/// file or decoder) feeding each slot's ring. Reading and decoding happen
/// here, ahead of time, so the RT thread only ever copies.
///
/// Not thread-safe: used on the PipeWire main-loop thread (or under its lock).
final class VoiceBank {
    private struct Voice {
        let source: LoopSource
        var failed = false
    }

    /// Allocated on first use: a soundscape that is never switched needs one ring, not two.
    private var rings: [SampleRing?]
    private let ringFrames: Int
    private let cache: PCMCache?
    private let logger: Logger
    private var voices: [Voice?]
    /// The slot the renderer was last told to make audible.
    private(set) var target: Int?

    init(ringFrames: Int, cache: PCMCache?, logger: Logger) {
        rings = Array(repeating: nil, count: Renderer.slotCount)
        self.ringFrames = ringFrames
        self.cache = cache
        self.logger = logger
        voices = Array(repeating: nil, count: Renderer.slotCount)
    }

    var targetSoundscape: SoundscapeID? {
        target.flatMap { voices[$0]?.source.data.id }
    }

    /// Loads `data` into a slot the renderer is not reading and fills its ring.
    /// Returns the slot, or nil when both are busy (a crossfade is under way).
    func prepare(_ data: SoundscapeData, slotsInUse: Set<Int>) throws(SoundscapeDecodeError) -> Int? {
        guard let slot = (0..<Renderer.slotCount).first(where: { !slotsInUse.contains($0) && $0 != target }) else {
            return nil
        }
        let source = try LoopSource(data: data, cache: cache, logger: logger)
        voices[slot] = Voice(source: source)
        ring(slot).reset()
        if let failure = fill(slot: slot) { throw failure }
        return slot
    }

    /// The ring of `slot`, created the first time it is needed.
    func ring(_ slot: Int) -> SampleRing {
        if let ring = rings[slot] { return ring }
        let ring = SampleRing(minimumFrames: ringFrames)
        rings[slot] = ring
        return ring
    }

    func makeTarget(_ slot: Int) {
        target = slot
    }

    /// Tops up every ring; returns the decode failures (each voice reports once).
    func refill() -> [SoundscapeDecodeError] {
        (0..<Renderer.slotCount).compactMap { fill(slot: $0) }
    }

    /// Drops decoders of slots the renderer has let go of.
    func releaseUnused(slotsInUse: Set<Int>) {
        for slot in 0..<Renderer.slotCount where !slotsInUse.contains(slot) && slot != target {
            voices[slot] = nil
        }
    }

    func removeAll() {
        voices = Array(repeating: nil, count: Renderer.slotCount)
        target = nil
    }

    private func fill(slot: Int) -> SoundscapeDecodeError? {
        guard let voice = voices[slot], !voice.failed else { return nil }
        do {
            try ring(slot).write(maximumFrames: .max) { destination, frames in
                try voice.source.read(into: destination, frames: frames)
                return frames
            }
            return nil
        } catch {
            voices[slot]?.failed = true
            return error as? SoundscapeDecodeError
                ?? SoundscapeDecodeError(soundscape: voice.source.data.id, reason: "\(error)")
        }
    }
}
