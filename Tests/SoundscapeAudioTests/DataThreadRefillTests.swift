import CPipeWire
import Foundation
import Logging
import Testing
@testable import SoundscapeAudio

/// Refills on the data thread, on a data loop of our own (no server needed):
/// the renderer and the refill run on that loop's thread, as in the daemon.
@Suite struct DataThreadRefillTests {
    private final class DataLoop {
        let handle: OpaquePointer
        let loop: UnsafeMutablePointer<pw_loop>

        init() {
            _ = PipeWireLibrary.initialised
            handle = pw_data_loop_new(nil)
            loop = pw_data_loop_get_loop(handle)!
            _ = pw_data_loop_start(handle)
        }

        deinit {
            _ = pw_data_loop_stop(handle)
            pw_data_loop_destroy(handle)
        }
    }

    /// Counts calls from the data thread.
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func bump() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    private struct Setup {
        let loop = DataLoop()
        let data: SoundscapeData
        let cache: PCMCache
        let ring = SampleRing(minimumFrames: 4096)
        let renderer = Renderer(settings: RenderSettings(), wake: {})
        let loopWakes = Counter()
        let refilledCalls = Counter()
        let refills: DataThreadRefill

        init() throws {
            data = try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("rain.opus"))
            cache = PCMCache(
                directory: NSTemporaryDirectory() + "soundscaped-pcm-\(UUID().uuidString)", buildPolicy: nil,
                logger: Logger(label: "test"))
            #expect(cache.write(data, to: cache.path(for: data)) == .success)
            // Written back before the data thread reads it. While the flusher writes a fresh
            // file back, its pages are locked for a moment and RWF_NOWAIT reads fall short
            // (PCMReadAhead); on a busy disk twice in a row, which asks for pages again: a
            // wake-up these tests would count against the window's one (seen once under load).
            let written = open(cache.path(for: data), O_RDONLY | O_CLOEXEC)
            #expect(written >= 0 && fsync(written) == 0, "the cache file could not be written back")
            if written >= 0 { close(written) }
            let (loopWakes, refilledCalls) = (self.loopWakes, self.refilledCalls)
            refills = DataThreadRefill(
                renderer: renderer, dataLoop: loop.loop,
                wakeLoopThread: { loopWakes.bump() }, refilled: { refilledCalls.bump() })
        }

        /// Fills the ring as the loop thread does, lends the reader, and makes the renderer play it at unity gain.
        func start() throws {
            let reader = try #require(cache.reader(for: data))
            try ring.write(maximumFrames: .max) { destination, frames in
                try reader.read(into: destination, frames: frames)
                return frames
            }
            let (renderer, ring) = (self.renderer, self.ring)
            runBlocking(on: loop.loop) {
                renderer.applyVoice(slot: 0, ring: ring, gain: 1)
                renderer.applyVolume(position: 1, immediately: true)
                renderer.applyRunning(true)
                renderer.applyFadeLevel(1)
            }
            refills.lend(slot: 0, ring: ring, reader: reader)
        }

        /// One cycle of `frames` on the data thread, then the refill event, as the loop runs them.
        func cycle(frames: Int) -> [Float] {
            let (renderer, refills) = (self.renderer, self.refills)
            var output: [Float] = []
            runBlocking(on: loop.loop) {
                output = renderer.renderInterleaved(frames: frames)
                refills.run()
            }
            return output
        }

        func removeCache() {
            try? FileManager.default.removeItem(atPath: cache.directory)
        }
    }

    @Test func aLentReaderKeepsTheRingFullSampleExactlyWithoutWakingTheLoopThread() throws {
        let setup = try Setup()
        defer { setup.removeCache() }
        try setup.start()
        var heard: [Float] = []
        for _ in 0..<12 { heard += setup.cycle(frames: 1024) }

        #expect(setup.refilledCalls.value >= 2, "a 4096-frame ring drained by 12 × 1024 frames is topped up on the data thread")
        #expect(setup.loopWakes.value == 0, "nothing for the loop thread")
        #expect(setup.refills.takeForwarded().isEmpty)
        #expect(!setup.refills.hasReturned(slot: 0))
        #expect(setup.renderer.counters.underrunFrames == 0)
        let decoder = try OpusLoopDecoder(data: setup.data)
        var reference = [Float](repeating: .nan, count: heard.count)
        try reference.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: heard.count / 2) }
        #expect(heard == reference, "what the renderer played is the loop, frame for frame")
    }

    @Test func layersLentOutOfStepAreToppedUpTogether() throws {
        let setup = try Setup()
        defer { setup.removeCache() }
        try setup.start()
        // The first layer half a cycle ahead of the second, and cycles that bring neither ring to
        // exactly half: topped up only below half, the second ring would not be when the first is.
        _ = setup.cycle(frames: 512)
        let second = SampleRing(minimumFrames: 4096)
        let reader = try #require(setup.cache.reader(for: setup.data))
        try second.write(maximumFrames: .max) { destination, frames in
            try reader.read(into: destination, frames: frames)
            return frames
        }
        let renderer = setup.renderer
        runBlocking(on: setup.loop.loop) { renderer.applyLayer(slot: 1, ring: second, gain: 1, level: 1) }
        setup.refills.lend(slot: 1, ring: second, reader: reader)
        #expect(setup.ring.availableFrames != second.availableFrames, "out of step to begin with")

        var levels: [(first: Int, second: Int, refills: Int)] = []
        for _ in 0..<16 {
            _ = setup.cycle(frames: 1000)
            levels.append((setup.ring.availableFrames, second.availableFrames, setup.refilledCalls.value))
        }
        let afterFirstTopUp = levels.drop { $0.refills == 0 }
        #expect(afterFirstTopUp.count >= 12, "a top-up within the first cycles: \(levels)")
        #expect(afterFirstTopUp.allSatisfy { $0.first == $0.second }, "in step once topped up together: \(levels)")
        let events = Set(afterFirstTopUp.map(\.refills)).count
        #expect(events <= 16 / 2, "one refill for both rings at a time: \(levels)")
        #expect(setup.renderer.counters.underrunFrames == 0)
        #expect(setup.loopWakes.value == 0)
    }

    @Test func theLoopThreadIsAskedForPagesAheadOncePerWindowAndNotToldOfIt() throws {
        let setup = try Setup()
        defer { setup.removeCache() }
        try setup.start()
        // `lend` asked for the first window; the next is asked for with `margin` of it left.
        let due = PCMReadAhead.window - PCMReadAhead.margin
        var played = 0
        while setup.loopWakes.value == 0 && played < 2 * PCMReadAhead.window {
            _ = setup.cycle(frames: 1024)
            played += 1024
        }
        #expect(setup.loopWakes.value == 1, "the data thread wakes the loop thread for pages ahead")
        // Asked at the top-up that crossed the mark: within a half ring (and a cycle) of it.
        #expect(abs(played - due) <= setup.ring.capacity / 2 + 1024, "asked after \(played) frames, due at \(due)")
        #expect(setup.refills.takeForwarded().isEmpty, "a request the loop thread makes, not news for it")

        for _ in 0..<64 { _ = setup.cycle(frames: 1024) }
        #expect(setup.loopWakes.value == 1, "the request covers the next window: no wake-up per top-up")
        #expect(!setup.refills.hasReturned(slot: 0))
        #expect(setup.renderer.counters.underrunFrames == 0)
    }

    @Test func aShortfallThatLastsAsksForPagesOnceUntilAReadComesBackWhole() throws {
        let setup = try Setup()
        defer { setup.removeCache() }
        let readAhead = PCMReadAhead(reader: try #require(setup.cache.reader(for: setup.data)))
        readAhead.request()
        #expect(!readAhead.toppedUp(frames: 16_384, shortOfPages: false), "well inside the window asked for")
        #expect(!readAhead.toppedUp(frames: 100, shortOfPages: true), "one short read: a page locked for a moment")
        #expect(!readAhead.toppedUp(frames: 16_384, shortOfPages: false), "the next one whole: nothing to ask for")
        #expect(!readAhead.toppedUp(frames: 100, shortOfPages: true))
        #expect(readAhead.toppedUp(frames: 0, shortOfPages: true), "short again: pages the kernel dropped, ask again")
        #expect(!readAhead.toppedUp(frames: 0, shortOfPages: true), "once: the reads are on their way")
        #expect(!readAhead.toppedUp(frames: 16_384, shortOfPages: false))
        #expect(!readAhead.toppedUp(frames: 0, shortOfPages: true), "a new streak after a whole read…")
        #expect(readAhead.toppedUp(frames: 0, shortOfPages: true), "…asks once it lasts")
        #expect(readAhead.toppedUp(frames: PCMReadAhead.window, shortOfPages: false), "the window read to its margin")
    }

    @Test func aReaderThatFailsGoesBackToTheLoopThread() throws {
        let setup = try Setup()
        defer { setup.removeCache() }
        try setup.start()
        // Cut the file short under the lent reader: its next read finds nothing there.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: setup.cache.path(for: setup.data)))
        try handle.truncate(atOffset: UInt64(PCMCache.headerBytes))
        try handle.close()

        _ = setup.cycle(frames: 3000)
        #expect(setup.refills.hasReturned(slot: 0))
        #expect(setup.refills.takeForwarded().contains(.refill), "the loop thread is asked to refill")
        #expect(setup.loopWakes.value == 1)
        #expect(setup.refilledCalls.value == 0)

        let reader = setup.refills.reclaim(slot: 0)
        #expect(reader != nil, "the reader comes back to the loop thread")
        #expect(!setup.refills.hasReturned(slot: 0))
        #expect(setup.refills.reclaim(slot: 0) == nil, "and is no longer the data thread's")
    }
}
