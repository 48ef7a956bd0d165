import Logging
import SoundscapeCore

/// The loop thread's side of the renderer's slots: the loop source (cache
/// file or decoder) feeding each slot's ring. Decoding and blocking reads
/// happen here, ahead of time, so the RT thread only ever copies. A voice that
/// plays from the PCM cache lends its reader to `DataThreadRefill`, which keeps
/// its ring full from the page cache; it comes back here when that cannot be
/// done without waiting, and before the voice is dropped.
///
/// Not thread-safe: used on the PipeWire main-loop thread (or under its lock).
final class VoiceBank {
    private struct Voice {
        let source: LoopSource
        var failed = false
    }

    /// Allocated on first use: a soundscape that is never switched needs one ring, not two.
    /// (Each ring is 256 KiB; a mix of three that is never switched needs three.)
    private var rings: [SampleRing?]
    private let ringFrames: Int
    private let cache: PCMCache?
    private let refills: DataThreadRefill
    private let logger: Logger
    private var voices: [Voice?]
    /// The slots the renderer was last told to hear (the mix's layers), by soundscape.
    private(set) var targets: [SoundscapeID: Int] = [:]

    init(ringFrames: Int, cache: PCMCache?, refills: DataThreadRefill, logger: Logger) {
        rings = Array(repeating: nil, count: Renderer.slotCount)
        self.ringFrames = ringFrames
        self.cache = cache
        self.refills = refills
        self.logger = logger
        voices = Array(repeating: nil, count: Renderer.slotCount)
    }

    /// Slots neither the renderer reads nor a layer holds.
    func freeSlots(slotsInUse: Set<Int>) -> [Int] {
        let held = Set(targets.values)
        return (0..<Renderer.slotCount).filter { !slotsInUse.contains($0) && !held.contains($0) }
    }

    /// Loads `data` into a slot the renderer is not reading and fills its ring.
    /// Returns the slot, or nil when every slot is busy (crossfades are under way).
    func prepare(_ data: SoundscapeData, slotsInUse: Set<Int>) throws(SoundscapeDecodeError) -> Int? {
        guard let slot = freeSlots(slotsInUse: slotsInUse).first else { return nil }
        retire(slot)
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

    /// `slot` now holds the layer of its soundscape.
    func makeTarget(_ slot: Int) {
        guard let id = voices[slot]?.source.data.id else { return }
        targets[id] = slot
    }

    /// The layer of `soundscape` is going out; its slot is freed once the renderer lets go.
    func dropTarget(_ soundscape: SoundscapeID) {
        targets[soundscape] = nil
    }

    /// Tops up every ring this thread feeds, taking back readers the data
    /// thread returned; returns the decode failures (each voice reports once).
    func refill() -> [SoundscapeDecodeError] {
        (0..<Renderer.slotCount).compactMap { slot in
            guard let voice = voices[slot] else { return nil }
            if voice.source.isLent {
                // Still lent: the data thread keeps that ring full.
                guard refills.hasReturned(slot: slot), let reader = refills.reclaim(slot: slot) else { return nil }
                voice.source.takeBack(reader)
            }
            return fill(slot: slot)
        }
    }

    /// Drops voices of slots the renderer has let go of.
    func releaseUnused(slotsInUse: Set<Int>) {
        for slot in freeSlots(slotsInUse: slotsInUse) { retire(slot) }
    }

    func removeAll() {
        for slot in 0..<Renderer.slotCount { retire(slot) }
        targets = [:]
    }

    /// Drops the voice of `slot`, first taking its reader back from the data
    /// thread (so the file closes here, and nothing else writes the ring).
    private func retire(_ slot: Int) {
        if voices[slot]?.source.isLent == true { _ = refills.reclaim(slot: slot) }
        voices[slot] = nil
    }

    private func fill(slot: Int) -> SoundscapeDecodeError? {
        guard let voice = voices[slot], !voice.failed else { return nil }
        do {
            let ring = ring(slot)
            try ring.write(maximumFrames: .max) { destination, frames in
                try voice.source.read(into: destination, frames: frames)
                return frames
            }
            if let reader = voice.source.lendReader() {
                refills.lend(slot: slot, ring: ring, reader: reader)
                logger.debug(
                    "the data thread refills from the PCM cache",
                    metadata: ["soundscape": "\(voice.source.data.id)", "slot": "\(slot)"])
            }
            return nil
        } catch {
            voices[slot]?.failed = true
            return error as? SoundscapeDecodeError
                ?? SoundscapeDecodeError(soundscape: voice.source.data.id, reason: "\(error)")
        }
    }
}
