import Synchronization

/// A single-producer, single-consumer ring of interleaved stereo float frames.
///
/// The decoder thread writes and the real-time thread reads, so neither side
/// may wait for the other: indices are monotonically growing frame counters
/// published with release/acquire ordering, and the storage is allocated once
/// up front. The consumer never allocates, locks or makes a system call.
public final class SampleRing: @unchecked Sendable {
    public static let channels = 2

    /// Capacity in frames; a power of two so positions wrap with a mask.
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Frames ever written; only the producer stores it.
    private let written = Atomic<Int>(0)
    /// Frames ever read; only the consumer stores it.
    private let read = Atomic<Int>(0)

    public init(minimumFrames: Int) {
        var capacity = 1
        while capacity < max(minimumFrames, 16) { capacity <<= 1 }
        self.capacity = capacity
        self.mask = capacity - 1
        // Not zero-filled: only written frames are ever read, and untouched pages
        // cost no resident memory until the decoder fills them.
        storage = .allocate(capacity: capacity * Self.channels)
    }

    deinit {
        storage.deallocate()
    }

    /// Frames the consumer can read now.
    public var availableFrames: Int {
        written.load(ordering: .acquiring) - read.load(ordering: .relaxed)
    }

    /// Frames the producer can write now.
    public var freeFrames: Int {
        capacity - (written.load(ordering: .relaxed) - read.load(ordering: .acquiring))
    }

    // MARK: Producer

    /// Lets the producer fill up to `maximumFrames` frames in place, in at most two
    /// contiguous runs, and publishes what `fill` reports as written. `fill`
    /// returns how many frames it wrote into the buffer it was given; returning
    /// fewer stops the write early.
    @discardableResult
    public func write(maximumFrames: Int, _ fill: (UnsafeMutablePointer<Float>, Int) throws -> Int) rethrows -> Int {
        let start = written.load(ordering: .relaxed)
        let free = capacity - (start - read.load(ordering: .acquiring))
        var remaining = min(free, maximumFrames)
        var position = start
        while remaining > 0 {
            let offset = position & mask
            let run = min(remaining, capacity - offset)
            let done = try fill(storage + offset * Self.channels, run)
            precondition(done >= 0 && done <= run, "ring fill reported \(done) of \(run) frames")
            position += done
            remaining -= done
            // Publish as we go so the consumer never waits for a whole refill.
            written.store(position, ordering: .releasing)
            if done < run { break }
        }
        return position - start
    }

    // MARK: Consumer (real-time safe)

    /// Calls `body` with up to two contiguous runs covering `frames` frames (or
    /// what is available), then marks them consumed. Returns frames consumed.
    @inline(__always)
    public func consume(frames: Int, _ body: (UnsafePointer<Float>, _ run: Int, _ outputOffset: Int) -> Void) -> Int {
        let start = read.load(ordering: .relaxed)
        let count = min(frames, written.load(ordering: .acquiring) - start)
        var done = 0
        while done < count {
            let offset = (start + done) & mask
            let run = min(count - done, capacity - offset)
            body(UnsafePointer(storage + offset * Self.channels), run, done)
            done += run
        }
        read.store(start + count, ordering: .releasing)
        return count
    }

    /// Empties the ring. Only valid while no consumer is reading it.
    public func reset() {
        read.store(written.load(ordering: .acquiring), ordering: .releasing)
    }
}
