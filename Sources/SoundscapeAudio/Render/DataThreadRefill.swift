import CPipeWire
import Synchronization

/// Refills rings from the PCM cache on PipeWire's data thread, right after the
/// cycle that drained them, so steady playback wakes no thread but that one.
///
/// Why: the data thread must wake once a cycle (23.4 times a second at the
/// largest quantum) whatever we do; a refill on the loop thread was a second
/// thread waking, 1.5 times a second. Reading here is safe for real time
/// because it happens after `process` has queued its buffer (in an event the
/// loop runs before it sleeps again), reads only what the page cache holds
/// (`preadv2` with `RWF_NOWAIT`), and allocates nothing; after each top-up it
/// asks the kernel (`POSIX_FADV_WILLNEED`, which starts the reads and returns)
/// for the pages the next one will need. Whatever it cannot do
/// without waiting (pages not cached, a voice still decoding, an error) goes
/// back to the loop thread, which may block.
///
/// Ownership: a slot's reader is either the loop thread's or lent here. Lending
/// and taking back run on the data thread through `pw_loop_invoke`, so the data
/// thread's state needs no lock; the ring's producer changes with the reader.
///
/// Also the router of the renderer's notifications: the renderer wakes the data
/// loop (not the loop thread), and everything but a refill done here is
/// forwarded to the loop thread, which reads it with `takeForwarded`.
final class DataThreadRefill: @unchecked Sendable {
    private struct Feed {
        let ring: SampleRing
        let reader: PCMLoopReader
    }

    private let renderer: Renderer
    private let dataLoop: UnsafeMutablePointer<pw_loop>
    private let wakeLoopThread: @Sendable () -> Void
    private let refilled: @Sendable () -> Void

    // Data-thread state.
    private let lent: UnsafeMutablePointer<Feed?>
    private let returned: UnsafeMutablePointer<PCMLoopReader?>
    /// Bit n set while slot n's reader waits in `returned` (read by the loop thread).
    private let returnedBits = Atomic<UInt8>(0)
    private let forwarded = Atomic<UInt32>(0)

    /// - Parameters:
    ///   - wakeLoopThread: signals the loop thread that `takeForwarded` has news (real-time safe).
    ///   - refilled: called on the data thread after a refill here (real-time safe).
    init(renderer: Renderer, dataLoop: UnsafeMutablePointer<pw_loop>,
         wakeLoopThread: @escaping @Sendable () -> Void, refilled: @escaping @Sendable () -> Void) {
        self.renderer = renderer
        self.dataLoop = dataLoop
        self.wakeLoopThread = wakeLoopThread
        self.refilled = refilled
        lent = .allocate(capacity: Renderer.slotCount)
        lent.initialize(repeating: nil, count: Renderer.slotCount)
        returned = .allocate(capacity: Renderer.slotCount)
        returned.initialize(repeating: nil, count: Renderer.slotCount)
    }

    deinit {
        lent.deinitialize(count: Renderer.slotCount)
        lent.deallocate()
        returned.deinitialize(count: Renderer.slotCount)
        returned.deallocate()
    }

    // MARK: Data thread

    /// The data loop's event: the renderer has news. Refills what it can, forwards the rest.
    func run() {
        var news = renderer.takeNotifications()
        guard !news.isEmpty else { return }
        if news.contains(.refill) {
            news.remove(.refill)
            var lentBits: UInt8 = 0
            var didRefill = false
            for slot in 0..<Renderer.slotCount {
                guard let feed = lent[slot] else { continue }
                switch top(feed) {
                case .done(let wrote):
                    lentBits |= 1 << slot
                    didRefill = didRefill || wrote
                case .giveBack:
                    returned[slot] = feed.reader
                    lent[slot] = nil
                    returnedBits.bitwiseOr(1 << slot, ordering: .releasing)
                }
            }
            if didRefill { refilled() }
            // A rendered ring still low that is not ours to fill: the loop thread's job.
            if renderer.slotsBelowHalf() & ~lentBits != 0 { news.insert(.refill) }
        }
        guard !news.isEmpty else { return }
        let before = forwarded.bitwiseOr(news.rawValue, ordering: .acquiringAndReleasing).oldValue
        if before & news.rawValue != news.rawValue { wakeLoopThread() }
    }

    private enum TopUp {
        case done(wrote: Bool)
        case giveBack
    }

    /// Fills `feed`'s ring from the page cache once it is half empty, then has
    /// the kernel fetch what the next top-up will read. Pages still on their
    /// way are waited for here, a cycle at a time, while the ring holds more
    /// than a quarter; below that the loop thread reads them, blocking.
    private func top(_ feed: Feed) -> TopUp {
        let ring = feed.ring
        guard ring.freeFrames >= ring.capacity / 2 else { return .done(wrote: false) }
        var shortfall: PCMLoopReader.Shortfall?
        let wrote = ring.write(maximumFrames: .max) { destination, frames in
            let (got, short) = feed.reader.readWithoutWaiting(into: destination, frames: frames)
            shortfall = short
            return got
        }
        switch shortfall {
        case nil, .wouldBlock:
            // A whole ring ahead: the next top-up reads more than half a ring (what
            // drained meanwhile), and the reads get a full refill period to land.
            feed.reader.prefetch(frames: ring.capacity)
            if shortfall != nil && ring.availableFrames < ring.capacity / 4 { return .giveBack }
            return .done(wrote: wrote > 0)
        case .unsupported, .failed:
            return .giveBack
        }
    }

    // MARK: Loop thread

    /// Takes the notifications forwarded since the last call.
    func takeForwarded() -> Renderer.Notification {
        Renderer.Notification(rawValue: forwarded.exchange(0, ordering: .acquiringAndReleasing))
    }

    /// Lends `reader` to the data thread to keep `ring` (slot `slot`'s) full.
    func lend(slot: Int, ring: SampleRing, reader: PCMLoopReader) {
        reader.prefetch(frames: ring.capacity)
        let feed = Feed(ring: ring, reader: reader)
        runBlocking(on: dataLoop) {
            precondition(self.lent[slot] == nil, "slot \(slot) is already lent")
            self.lent[slot] = feed
        }
    }

    /// Whether the data thread gave slot `slot`'s reader back (it could not
    /// refill without waiting); cheap, no round trip.
    func hasReturned(slot: Int) -> Bool {
        returnedBits.load(ordering: .acquiring) & (1 << slot) != 0
    }

    /// Takes slot `slot`'s reader back, lent or returned; nil when it has none.
    /// Afterwards the data thread no longer touches that slot's ring.
    func reclaim(slot: Int) -> PCMLoopReader? {
        var reader: PCMLoopReader?
        runBlocking(on: dataLoop) {
            reader = self.lent[slot]?.reader ?? self.returned[slot]
            self.lent[slot] = nil
            self.returned[slot] = nil
            self.returnedBits.bitwiseAnd(~(1 << slot), ordering: .releasing)
        }
        return reader
    }
}
