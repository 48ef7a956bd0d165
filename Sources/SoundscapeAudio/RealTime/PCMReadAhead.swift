import Synchronization

/// Keeps what a lent cache reader reads next in the page cache, asked for on
/// the loop thread, never the real-time one.
///
/// Why: a loop heard once a minute or more is cold to the kernel, and its pages
/// do not stay cached from one pass to the next, so something must ask for
/// them before the data thread's `readWithoutWaiting` gets there. Asking
/// (`posix_fadvise(POSIX_FADV_WILLNEED)`) allocates page-cache pages and
/// submits their reads before it returns; an allocation can wait in direct
/// reclaim and a submission for a free request in the block layer, so it has
/// no place on the real-time thread.
///
/// Why so far ahead: a request costs the loop thread a wake-up, and in steady
/// playback nothing else wakes it (the data thread wakes once a graph cycle
/// whatever we do, 23.4 times a second, and refills right after the cycle). So
/// each request covers `window` frames (8 MiB, 21.8 s), and the data thread
/// asks for the next only when fewer than `margin` (2 MiB, 5.5 s) of it are
/// left to read: one loop-thread wake-up every 16.4 s, 0.06 a second, and 5.5 s
/// for the reads to land (a disk needs milliseconds). A loop no longer than
/// the window is asked for whole, once. A read can fall short for a moment
/// with every page cached: a page the flusher is writing back is locked while
/// its write is set up, and `RWF_NOWAIT` does not wait for that lock (seen
/// every few seconds on ext4 while a freshly written cache file is flushed);
/// the next top-up finds it. Pages the kernel dropped (memory pressure) make
/// the reads fall short again and again: after `shortfallsBeforeAsking` in a
/// row the data thread asks once more, and the reader goes back to the loop
/// thread if the ring runs low first (`DataThreadRefill`). The page cache this takes is the kernel's to
/// reclaim, not our resident memory; every page of the loop passes through it
/// on each pass anyway.
///
/// Positions count frames read since the reader was lent, so they only grow,
/// and each side writes its own: `consumed` the data thread, `requestedThrough`
/// the loop thread.
final class PCMReadAhead: @unchecked Sendable {
    static let window = 1 << 20
    static let margin = 1 << 18
    /// Top-ups in a row that fall short before the loop thread is asked again.
    static let shortfallsBeforeAsking = 2

    let reader: PCMLoopReader
    /// The loop frame the reader was at when lent.
    private let origin: Int64
    private let consumed = Atomic<Int>(0)
    private let requestedThrough = Atomic<Int>(0)
    /// Data thread only: top-ups in a row that fell short of pages (one request per streak).
    private var shortStreak = 0

    /// Loop thread, while it owns `reader`.
    init(reader: PCMLoopReader) {
        self.reader = reader
        origin = reader.position
    }

    /// Loop thread: asks the kernel for the `window` frames from where the data
    /// thread has got to (pages already cached cost a lookup each).
    func request() {
        let from = consumed.load(ordering: .relaxed)
        reader.prefetch(at: origin + Int64(from), frames: Self.window)
        // All of a short loop is asked for: again only when a read falls short.
        let through = reader.frames <= Int64(Self.window) ? Int.max : from + Self.window
        requestedThrough.store(through, ordering: .releasing)
    }

    /// Data thread, after a top-up that read `frames` and fell short of pages
    /// (`shortOfPages`) or not: whether to ask the loop thread for a request now.
    /// Real-time safe: atomics only.
    func toppedUp(frames: Int, shortOfPages: Bool) -> Bool {
        let total = consumed.load(ordering: .relaxed) + frames
        consumed.store(total, ordering: .relaxed)
        if shortOfPages {
            shortStreak += 1
            return shortStreak == Self.shortfallsBeforeAsking
        }
        shortStreak = 0
        return total + Self.margin > requestedThrough.load(ordering: .acquiring)
    }
}
