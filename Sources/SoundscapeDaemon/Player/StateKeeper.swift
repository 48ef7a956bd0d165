import Logging
import SoundscapeCore
import SoundscapeStore
import SoundscapeSystem
import Synchronization

/// The player's saved state and preferences, read and written on a thread of
/// their own (`soundscaped-db`) so SQLite never runs on the event loop.
///
/// Why not the shared worker: that one goes to `SCHED_IDLE` once the state is
/// restored (it hashes and scans files, which must never delay a client), and
/// on a busy machine an idle-policy thread waits seconds for CPU. A write is a
/// fraction of a millisecond, so this thread keeps normal priority, and a
/// command is answered once its change is written (`saved(within:)`): whatever
/// happens to the process after the reply, the change survives it. (With the
/// write behind the idle worker, a `volume 30` answered and then a SIGKILL lost
/// the 30 while two other programs kept both cores busy.) The wait is bounded:
/// a database another process holds locked (SQLite's busy timeout is 2 s) or a
/// disk that hangs delays the write, never the answer beyond the bound.
///
/// Saves are coalesced: the latest state (and preferences) is written. A
/// write that fails (disk full, a read-only or locked database) is kept and
/// written again, on the next save and every `retryInterval` until one
/// succeeds, so the last change survives a restart once the disk takes
/// writes again.
final class StateKeeper: Sendable {
    struct Restored: Sendable {
        var state: PersistedState?
        var preferences: Preferences?
        /// The saved mixes, by name.
        var mixes: [SavedMix] = []
        /// What to tell the user once about the database (moved aside, read-only, a row that could not be read).
        var notices: [String]
    }

    /// A saved mix written or deleted: unlike the state, each is written in its turn.
    enum MixChange: Sendable, Equatable {
        case save(SavedMix)
        case delete(String)
    }

    private struct Pending: Sendable {
        var state: PersistedState?
        var preferences: Preferences?
        var mixChanges: [MixChange] = []
        var flushQueued = false
        var retryScheduled = false
        /// Why the last write failed; nil while writes go through.
        var failure: String?
    }

    private let store: StateStore?
    private let worker: WorkerThread
    private let logger: Logger
    private let retryInterval: Duration
    private let pending = Mutex(Pending())

    init(store: StateStore?, logger: Logger, retryInterval: Duration = .seconds(5)) {
        self.store = store
        worker = WorkerThread(name: "soundscaped-db")
        self.logger = logger
        self.retryInterval = retryInterval
    }

    /// Whether there is a database at all (it could not be opened otherwise).
    var hasStore: Bool { store != nil }

    /// Why the last write failed, while writes fail.
    var writeFailure: String? { pending.withLock { $0.failure } }

    /// Begins reading the saved state and preferences on the database's thread;
    /// the start awaits them once it needs them.
    func startRestoring() -> WorkerThread.Job<Restored> {
        guard let store else { return .finished(Restored(notices: [])) }
        return worker.start {
            var restored = Restored(notices: store.notices)
            do {
                restored.state = try store.load()
            } catch {
                restored.notices.append("\(error); starting with defaults")
            }
            do {
                restored.preferences = try store.loadPreferences()
            } catch {
                restored.notices.append("\(error); using default preferences")
            }
            do {
                restored.mixes = try store.loadMixes()
            } catch {
                restored.notices.append("\(error); starting without them")
            }
            return restored
        }
    }

    func save(_ state: PersistedState) {
        enqueue { $0.state = state }
    }

    func save(_ preferences: Preferences) {
        enqueue { $0.preferences = preferences }
    }

    /// Saves or deletes a saved mix, after the changes queued before it.
    func change(_ mix: MixChange) {
        enqueue { $0.mixChanges.append(mix) }
    }

    /// Where a damaged database was moved at start, if it was.
    var movedAside: String? { store?.movedAside }

    /// Proves a write goes through (the health probe); a success also writes
    /// what earlier failures left unsaved. Nil when writable, else why not.
    func checkWritable() async -> String? {
        guard let store else { return "the state database could not be opened" }
        let problem: String? = await worker.run { () -> String? in
            do {
                try store.checkWritable()
                return nil
            } catch {
                return "\(error)"
            }
        }
        if problem == nil { enqueue { _ in } }
        return problem
    }

    /// Returns once every save made before the call has been tried (written,
    /// or kept for a retry when the database refused it).
    func saved() async {
        guard store != nil else { return }
        await worker.run {}
    }

    /// `saved()`, or `bound` at most: then the write goes on without the caller.
    ///
    /// The bound is a call on the player's clock, cancelled once the write is
    /// done: the daemon's clock makes it a NIO scheduled task on its own event
    /// loop, which a cancel removes, so the playing daemon does not wake a
    /// second after every command (a cancelled `Task.sleep` still did).
    func saved(within bound: Duration, clock: any PlayerClock) async {
        guard store != nil else { return }
        let waiter = OnceWaiter()
        var timeout: ScheduledCall?
        await withCheckedContinuation { continuation in
            waiter.set(continuation)
            timeout = clock.schedule(at: clock.now + bound) { waiter.resume() }
            worker.submit { waiter.resume() }
        }
        timeout?.cancel()
    }

    // MARK: Writing (the database thread)

    private func enqueue(_ change: (inout Pending) -> Void) {
        guard store != nil else { return }
        let queue = pending.withLock { pending -> Bool in
            change(&pending)
            guard !pending.flushQueued, pending.state != nil || pending.preferences != nil || !pending.mixChanges.isEmpty
            else { return false }
            pending.flushQueued = true
            return true
        }
        if queue { worker.submit { [self] in flush() } }
    }

    private func flush() {
        guard let store else { return }
        let (state, preferences, mixChanges) = pending.withLock { pending in
            defer {
                pending.state = nil
                pending.preferences = nil
                pending.mixChanges = []
                pending.flushQueued = false
            }
            return (pending.state, pending.preferences, pending.mixChanges)
        }
        var failure: String?
        if let state {
            do {
                try store.save(state)
            } catch {
                failure = error.description
                // Unless a newer state came meanwhile, this one is still to be written.
                pending.withLock { if $0.state == nil { $0.state = state } }
            }
        }
        // Once the database has refused a write (locked past its busy timeout, full, read-only),
        // the rest wait for the retry too: each would wait out the same timeout for nothing.
        if let preferences {
            do {
                guard failure == nil else { throw Deferred() }
                try store.save(preferences)
            } catch {
                failure = failure ?? "\(error)"
                pending.withLock { if $0.preferences == nil { $0.preferences = preferences } }
            }
        }
        for (index, change) in mixChanges.enumerated() {
            do {
                guard failure == nil else { throw Deferred() }
                switch change {
                case .save(let mix): try store.save(mix)
                case .delete(let name): _ = try store.deleteMix(named: name)
                }
            } catch {
                failure = failure ?? "\(error)"
                // This one and those after it, before any queued meanwhile: the order holds.
                pending.withLock { $0.mixChanges.insert(contentsOf: mixChanges[index...], at: 0) }
                break
            }
        }
        let (previous, scheduleRetry) = pending.withLock { pending -> (String?, Bool) in
            let previous = pending.failure
            pending.failure = failure
            guard failure != nil, !pending.retryScheduled else { return (previous, false) }
            pending.retryScheduled = true
            return (previous, true)
        }
        if let failure, previous == nil {
            logger.error("\(failure); keeping the change in memory and writing it again once the database takes writes")
        } else if failure == nil, previous != nil {
            logger.notice("the state database takes writes again; the latest state is saved")
        }
        if scheduleRetry {
            let interval = retryInterval
            Task { [weak self] in
                try? await Task.sleep(for: interval)
                self?.retry()
            }
        }
    }

    /// A write not tried because an earlier one in the same flush was refused.
    private struct Deferred: Error {}

    private func retry() {
        pending.withLock { $0.retryScheduled = false }
        enqueue { _ in }
    }
}

/// A continuation that the first of several callers resumes; the rest do nothing.
private final class OnceWaiter: Sendable {
    private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Void, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume() {
        continuation.withLock { $0.take() }?.resume()
    }
}
