import ServiceLifecycle

/// Who turns SIGTERM and SIGINT into a graceful shutdown.
public enum ShutdownSignals: Sendable {
    /// swift-service-lifecycle's own handler (a libdispatch signal source).
    case serviceLifecycle
    /// The caller collects the signals (the daemon's main thread, in `sigwaitinfo`)
    /// and calls `request()`, so libdispatch's threads never start; see `EventLoopConcurrency`.
    case external(ShutdownRequest)
}

/// A graceful shutdown asked for from outside the concurrency world (a signal
/// collected on the main thread), before or after the service group runs: a
/// request made early waits in the stream.
public final class ShutdownRequest: Sendable {
    let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (requests, continuation) = AsyncStream.makeStream()
    }

    /// Asks for the graceful shutdown; safe from any thread (not from a signal handler).
    public func request() {
        continuation.yield()
    }

    /// Ends the stream: the group is shutting down for another reason.
    func finish() {
        continuation.finish()
    }
}

/// Ends at the first shutdown request; run with `successTerminationBehavior:
/// .gracefullyShutdownGroup`, that ending shuts the group down. It also ends
/// when the group shuts down for another reason.
struct ShutdownRequestService: Service {
    let request: ShutdownRequest

    func run() async {
        await withGracefulShutdownHandler {
            for await _ in request.requests { return }
        } onGracefulShutdown: {
            request.finish()
        }
    }
}
