import CPipeWire
import Synchronization

/// Refills rings from the PCM cache on PipeWire's data thread, right after the
/// cycle that drained them, so steady playback wakes no thread but that one.
///
/// Why: the data thread must wake once a cycle (23.4 times a second at the
/// largest quantum) whatever we do; a refill on the loop thread was a second
/// thread waking, 1.5 times a second. Reading here keeps to what the real-time
/// thread may do: it happens after `process` has queued its buffer (in an event
/// the loop runs before it sleeps again), it reads only what the page cache
/// holds (`PCMLoopReader.readWithoutWaiting`, which says exactly what such a
/// read can still cost), and it takes no lock and allocates nothing. The pages
/// it will need are asked for on the loop thread (`PCMReadAhead`), which the
/// data thread wakes for that once every 16 s or so. Whatever it cannot do
/// without waiting (pages not cached, a voice still decoding, an error) goes
/// back to the loop thread, which may block.
///
/// Ownership: a slot's reader is either the loop thread's or lent here. Lending
/// and taking back run on the data thread through `pw_loop_invoke`, so the data
/// thread's state needs no lock; the ring's producer changes with the reader.
/// The loop thread always holds a reference of its own to a lent reader (in
/// `readAheads`), so the data thread never drops the last one: the descriptor
/// is closed on the loop thread, never here.
///
/// Also the router of the renderer's notifications: the renderer wakes the data
/// loop (not the loop thread), and everything but a refill done here is
/// forwarded to the loop thread, which reads it with `takeForwarded`.
final class DataThreadRefill: @unchecked Sendable {
    private struct Feed {
        let ring: SampleRing
        let readAhead: PCMReadAhead
        var reader: PCMLoopReader { readAhead.reader }
    }

    private let renderer: Renderer
    private let dataLoop: UnsafeMutablePointer<pw_loop>
    private let wakeLoopThread: @Sendable () -> Void
    private let refilled: @Sendable () -> Void

    // Data-thread state.
    private let lent: UnsafeMutablePointer<Feed?>
    private let returned: UnsafeMutablePointer<PCMLoopReader?>
    /// Bit n set while slot n's reader waits in `returned` (read by the loop thread).
    private let returnedBits = Atomic<UInt32>(0)
    private let forwarded = Atomic<UInt32>(0)
    /// Bit n set while slot n's reader wants the loop thread to ask for pages ahead.
    private let readAheadDue = Atomic<UInt32>(0)

    // Loop-thread state: the read-ahead of each lent reader (which keeps the reader alive).
    private var readAheads: [PCMReadAhead?] = Array(repeating: nil, count: Renderer.slotCount)

    /// - Parameters:
    ///   - wakeLoopThread: signals the loop thread that `takeForwarded` has news (real-time safe).
    ///   - refilled: called on the data thread after a refill here (real-time safe).
    init(
        renderer: Renderer, dataLoop: UnsafeMutablePointer<pw_loop>,
        wakeLoopThread: @escaping @Sendable () -> Void, refilled: @escaping @Sendable () -> Void
    ) {
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
            var lentBits: UInt32 = 0
            var didRefill = false
            var wantPages: UInt32 = 0
            for slot in 0..<Renderer.slotCount {
                guard let feed = lent[slot] else { continue }
                switch top(feed) {
                case .done(let wrote, let askForPages):
                    lentBits |= 1 << slot
                    didRefill = didRefill || wrote
                    if askForPages { wantPages |= 1 << slot }
                case .giveBack:
                    returned[slot] = feed.reader
                    lent[slot] = nil
                    returnedBits.bitwiseOr(1 << slot, ordering: .releasing)
                }
            }
            if didRefill { refilled() }
            // A rendered ring still low that is not ours to fill: the loop thread's job.
            if renderer.slotsBelowHalf() & ~lentBits != 0 { news.insert(.refill) }
            if wantPages != 0
                && readAheadDue.bitwiseOr(wantPages, ordering: .acquiringAndReleasing).oldValue
                    & wantPages != wantPages
            {
                // The loop thread reads `readAheadDue` whenever it wakes for news.
                news.insert(.readAhead)
            }
        }
        guard !news.isEmpty else { return }
        let before = forwarded.bitwiseOr(news.rawValue, ordering: .acquiringAndReleasing).oldValue
        if before & news.rawValue != news.rawValue { wakeLoopThread() }
    }

    private enum TopUp {
        /// `askForPages`: the loop thread should ask for the pages ahead now.
        case done(wrote: Bool, askForPages: Bool)
        case giveBack
    }

    /// Fills `feed`'s ring from the page cache. Pages still on their way are
    /// waited for here, a cycle at a time, while the ring holds more than a
    /// quarter; below that the loop thread reads them, blocking.
    ///
    /// Every lent ring is topped up whenever one of them is half empty, not
    /// only that one: the layers of a mix drain at the same pace, so once full
    /// together they reach half together, and a mix costs one refill event (an
    /// eventfd, an epoll round, a read of it, the stall deadline's timer) per
    /// half ring, as one soundscape does. Topped up only when half empty, rings
    /// started at different times stayed out of step and each layer had its own
    /// (docs/performance.md, "Layers").
    private func top(_ feed: Feed) -> TopUp {
        let ring = feed.ring
        guard ring.freeFrames > 0 else { return .done(wrote: false, askForPages: false) }
        var shortfall: PCMLoopReader.Shortfall?
        let wrote = ring.write(maximumFrames: .max) { destination, frames in
            let (got, short) = feed.reader.readWithoutWaiting(into: destination, frames: frames)
            shortfall = short
            return got
        }
        switch shortfall {
        case nil, .wouldBlock:
            let askForPages = feed.readAhead.toppedUp(frames: wrote, shortOfPages: shortfall != nil)
            if shortfall != nil && ring.availableFrames < ring.capacity / 4 { return .giveBack }
            return .done(wrote: wrote > 0, askForPages: askForPages)
        case .unsupported, .failed:
            return .giveBack
        }
    }

    // MARK: Loop thread

    /// Takes the notifications forwarded since the last call, after asking for
    /// the pages any lent reader wants ahead (`.readAhead`, which only the loop
    /// thread sees and handles here).
    func takeForwarded() -> Renderer.Notification {
        var news = Renderer.Notification(rawValue: forwarded.exchange(0, ordering: .acquiringAndReleasing))
        if news.contains(.readAhead) {
            news.remove(.readAhead)
            let due = readAheadDue.load(ordering: .acquiring)
            for slot in 0..<Renderer.slotCount where due & (1 << slot) != 0 {
                readAheads[slot]?.request()
            }
            // After the requests: a data thread that sees the bit clear sees what was asked.
            readAheadDue.bitwiseAnd(~due, ordering: .releasing)
        }
        return news
    }

    /// Lends `reader` to the data thread to keep `ring` (slot `slot`'s) full,
    /// having asked for the pages it will read first.
    func lend(slot: Int, ring: SampleRing, reader: PCMLoopReader) {
        let readAhead = PCMReadAhead(reader: reader)
        readAhead.request()
        readAheads[slot] = readAhead
        let feed = Feed(ring: ring, readAhead: readAhead)
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
        readAheadDue.bitwiseAnd(~(1 << slot), ordering: .relaxed)
        readAheads[slot] = nil
        return reader
    }
}

extension Renderer.Notification {
    /// Not the renderer's: the data thread's own news for the loop thread (a
    /// lent reader wants pages asked for), carried in the same word so that one
    /// wake-up covers both. `takeForwarded` handles it and never returns it.
    fileprivate static let readAhead = Renderer.Notification(rawValue: 1 << 31)
}
