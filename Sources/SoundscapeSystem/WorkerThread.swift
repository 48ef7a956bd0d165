import CSoundscapeSystem
import Glibc
import Synchronization

/// A thread of its own for work that may block: reading and checking files,
/// scanning directories, SQLite. In the daemon all Swift concurrency runs on
/// the one event-loop thread that also answers the control socket and the
/// systemd watchdog; anything that can wait for a disk goes here instead, so
/// that loop never waits. Jobs run one at a time, in the order submitted.
///
/// The thread sleeps on a condition variable when there is nothing to do: no
/// wake-ups while idle.
public final class WorkerThread: Sendable {
    private let queue: JobQueue

    /// Starts the thread, named `name` (at most 15 characters show in top),
    /// at normal priority: at start-up its jobs (the saved state, opening the
    /// soundscape) are on the way to sound, after a crash too. Once they are
    /// done, `moveToBackground()` puts it under `SCHED_IDLE`, so that from then
    /// on it only gets CPU nothing else wants and a client is answered first.
    ///
    /// Why `SCHED_IDLE` and not a nice value: under the EEVDF scheduler a
    /// normal thread the event loop wakes may preempt the loop for a whole
    /// slice whatever its nice value. At nice 19, during a cold 40-minute play
    /// on two cores, the loop sat runnable for 2.6 ms behind the worker it had
    /// just woken while the other core was idle (`perf sched timehist`); an
    /// idle-policy thread never preempts a normal one. (`SCHED_BATCH` at nice 19
    /// does not preempt on waking either, but still let a list's p99 reach
    /// 1.7 ms in one run of four: docs/performance.md.) Why not from the start:
    /// an idle-policy thread gets almost nothing while the machine is busy, and
    /// one restart in four of the soak then took 0.28 s longer to sound.
    public init(name: String) {
        let queue = JobQueue()
        self.queue = queue
        BlockingThread.start(stackSize: 512 * 1024) {
            _ = scs_set_thread_name(UInt(pthread_self()), String(name.prefix(15)))
            queue.runUntilClosed()
        }
    }

    /// From the next job on, the thread runs under `SCHED_IDLE` (for good: an
    /// unprivileged thread cannot leave that policy).
    public func moveToBackground() {
        submit { WorkerThread.setCallingThreadPolicy(.idle) }
    }

    /// How a background thread gives way to the rest of the process.
    public enum Policy: Sendable {
        /// `SCHED_BATCH` at nice 19: never preempts on waking, and a small share under load.
        case batch
        /// `SCHED_IDLE`: only CPU that nothing else wants.
        case idle
    }

    /// Sets `policy` on the calling thread (a pid of 0 names the calling thread
    /// on Linux); where the policy cannot be set, nice 19 alone.
    public static func setCallingThreadPolicy(_ policy: Policy) {
        // Linux's SCHED_BATCH is 3 and SCHED_IDLE 5; Glibc hides the names behind _GNU_SOURCE.
        var parameters = sched_param(sched_priority: 0)
        let set = sched_setscheduler(0, policy == .batch ? 3 : 5, &parameters) == 0
        if policy == .batch || !set {
            // PRIO_PROCESS with this thread's id sets the thread's nice value alone on Linux.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(scs_gettid()), 19)
        }
    }

    deinit {
        queue.close()
    }

    /// Runs `job` on the thread, after every job submitted before it.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        queue.push(job)
    }

    /// Runs `body` on the thread and returns its result; the caller's task is
    /// suspended meanwhile, so its executor is free for other work.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await start(body).value
    }

    /// Queues `body` now and returns at once; its result is awaited later
    /// (`Job.value`). For work that should begin before its caller can wait for
    /// it: the daemon reads its saved state while the rest of it is being set up.
    public func start<T: Sendable>(_ body: @escaping @Sendable () -> T) -> Job<T> {
        let job = Job<T>()
        submit { job.finish(body()) }
        return job
    }

    /// The result of a job queued with `start`, once it has run.
    public final class Job<Value: Sendable>: Sendable {
        private struct State: ~Copyable {
            var result: Value?
            var waiters: [CheckedContinuation<Value, Never>] = []
        }

        private let state = Mutex(State())

        init() {}

        /// A job whose result is known already.
        public static func finished(_ value: Value) -> Job<Value> {
            let job = Job<Value>()
            job.finish(value)
            return job
        }

        fileprivate func finish(_ value: Value) {
            let waiters = state.withLock { state in
                state.result = value
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: value) }
        }

        /// The job's result, waiting for it if it has not run yet.
        public var value: Value {
            get async {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Value? in
                        if let result = state.result { return result }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
        }
    }
}

/// The jobs waiting for a `WorkerThread`, under a pthread mutex and condition
/// variable (allocated, so their addresses never move).
private final class JobQueue: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var closed = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func push(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// After the jobs already queued, the thread ends.
    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func runUntilClosed() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == jobs.count {
            if closed { return nil }
            pthread_cond_wait(condition, mutex)
        }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            // Drained: drop the finished jobs (and what they captured) at once.
            jobs.removeAll(keepingCapacity: jobs.count <= 64)
            head = 0
        }
        return job
    }
}
