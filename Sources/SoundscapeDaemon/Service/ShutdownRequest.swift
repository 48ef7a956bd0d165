import ServiceLifecycle
import Synchronization

/// Who turns SIGTERM and SIGINT into a graceful shutdown.
public enum ShutdownSignals: Sendable {
    /// swift-service-lifecycle's own handler (a libdispatch signal source).
    case serviceLifecycle
    /// The caller collects the signals (the daemon's main thread, in `sigwaitinfo`)
    /// and calls `request()`, so libdispatch never starts; see `EventLoopConcurrency`.
    case external(ShutdownRequest)
}

/// A graceful shutdown asked for from outside the concurrency world (a signal
/// collected on the main thread), before or after the service group exists.
public final class ShutdownRequest: Sendable {
    private enum State {
        case waiting(requested: Bool)
        case running(ServiceGroup)
        case finished
    }

    private let state = Mutex(State.waiting(requested: false))

    public init() {}

    /// Starts the graceful shutdown now, or as soon as the group runs.
    public func request() {
        let group: ServiceGroup? = state.withLock { state in
            switch state {
            case .waiting:
                state = .waiting(requested: true)
                return nil
            case .running(let group):
                return group
            case .finished:
                return nil
            }
        }
        if let group {
            Task { await group.triggerGracefulShutdown() }
        }
    }

    /// Hands over the running group; returns whether a shutdown was already asked for.
    func attach(_ group: ServiceGroup) -> Bool {
        state.withLock { state in
            guard case .waiting(let requested) = state else { return false }
            state = .running(group)
            return requested
        }
    }

    func detach() {
        state.withLock { $0 = .finished }
    }
}
