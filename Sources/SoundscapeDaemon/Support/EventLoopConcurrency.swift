// The executor factory is SPI, and SPI may change in any release: it is used only
// with the compilers it was tested with (6.3.x). Any other compiler takes the public
// path — libdispatch's pool, and swift-service-lifecycle's signal handling — which
// costs about one wake-up a second (the pool's monitor) and changes nothing else.
#if compiler(>=6.3) && !compiler(>=6.4)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
#endif
import NIOCore
import NIOPosix
import Synchronization

/// Runs Swift concurrency, `Task.sleep` included, on NIO's singleton event loop
/// instead of libdispatch.
///
/// Why: once any libdispatch global queue has had a worker, libdispatch arms a
/// pool monitor that wakes its manager thread every second for the life of the
/// process. For a service that plays for days at about 23 wake-ups a second,
/// that one timer is 4 % of all wake-ups. NIO's event loop sleeps in epoll
/// until there is work (its timers are a timerfd), and the daemon's sockets
/// already live on it. One thread is plenty for a control plane this small.
///
/// It uses the runtime's executor factory (Swift 6.3, still SPI; NIO's global
/// enqueue hook alone is not enough, since `Task.sleep` schedules on the default
/// executor directly). Only the daemon's entry point installs it: the tests keep
/// the default executor, and the daemon's end-to-end tests run this one.
public enum EventLoopConcurrency {
    /// Makes NIO's singleton group (of `threads` loops) the default executor; call once,
    /// from the main thread, before any task exists. Returns false on a toolchain
    /// without the executor factory, where nothing changes.
    public static func install(threads: Int = 1) -> Bool {
        #if compiler(>=6.3) && !compiler(>=6.4)
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return true
        }
        NIOSingletons.groupLoopCountSuggestion = threads
        _createExecutors(factory: EventLoopExecutorFactory.self)
        return true
        #else
        return false
        #endif
    }

    /// Whether `install` succeeded.
    public static var isInstalled: Bool { installed.load(ordering: .acquiring) }

    /// The event loops Swift concurrency runs on once installed.
    static var eventLoopGroup: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    private static let installed = Atomic(false)
}

#if compiler(>=6.3) && !compiler(>=6.4)
private enum EventLoopExecutorFactory: ExecutorFactory {
    static let executor = EventLoopTaskExecutor(group: MultiThreadedEventLoopGroup.singleton)

    /// Unused by the daemon (nothing runs on the main actor); the platform's.
    static var mainExecutor: any MainExecutor { PlatformExecutorFactory.mainExecutor }
    static var defaultExecutor: any TaskExecutor { executor }
}

/// The default task executor: jobs run on an event loop of `group`, delayed ones
/// as NIO scheduled tasks.
private final class EventLoopTaskExecutor: TaskExecutor, SchedulingExecutor {
    private let group: MultiThreadedEventLoopGroup

    init(group: MultiThreadedEventLoopGroup) {
        self.group = group
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `any()` prefers the loop we are on, so a task hopping between actors stays put.
        group.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        let job = UnownedJob(job)
        let run: @Sendable () -> Void = { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        let delay = clock.now.duration(to: instant)
        guard let duration = delay as? Duration else {
            // Every clock the daemon sleeps on counts in Duration; an exotic one
            // is handed to the platform's executor rather than guessed at.
            (PlatformExecutorFactory.defaultExecutor as? any SchedulingExecutor)?
                .enqueue(ExecutorJob(job), at: instant, tolerance: tolerance, clock: clock)
            return
        }
        let delayAmount = TimeAmount(duration)
        let loop = group.any()
        if delayAmount.nanoseconds <= 0 {
            loop.execute(run)
        } else {
            loop.scheduleTask(in: delayAmount, run)
        }
    }
}
#endif
