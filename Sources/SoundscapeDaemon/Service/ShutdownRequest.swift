import ServiceLifecycle

/// Requests made from outside the concurrency world — a signal collected on
/// the daemon's main thread in `sigwaitinfo` — before or after the service
/// group runs: a request made early waits in the stream.
public final class ExternalRequest: Sendable {
    let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (requests, continuation) = AsyncStream.makeStream()
    }

    /// Asks; safe from any thread (not from a signal handler).
    public func request() {
        continuation.yield()
    }

    /// Ends the stream: the group is shutting down.
    func finish() {
        continuation.finish()
    }
}

/// The signals the daemon acts on, as its main thread turns them into requests:
/// SIGTERM and SIGINT a graceful shutdown, SIGHUP a reload of the config file.
/// (SIGUSR1 and SIGUSR2 are blocked and ignored; SIGPIPE is ignored.)
public struct DaemonSignals: Sendable {
    public let shutdown = ExternalRequest()
    public let reload = ExternalRequest()

    public init() {}
}

/// Ends at the first shutdown request; run with `successTerminationBehavior:
/// .gracefullyShutdownGroup`, that ending shuts the group down. It also ends
/// when the group shuts down for another reason.
struct ShutdownRequestService: Service {
    let request: ExternalRequest

    func run() async {
        await withGracefulShutdownHandler {
            for await _ in request.requests { return }
        } onGracefulShutdown: {
            request.finish()
        }
    }
}

/// Reloads the config file on each reload request (SIGHUP), one at a time.
struct ReloadService: Service, CustomStringConvertible {
    let request: ExternalRequest
    let reloader: Reloader

    func run() async {
        await withGracefulShutdownHandler {
            for await _ in request.requests { _ = await reloader.reload(reason: "SIGHUP") }
        } onGracefulShutdown: {
            request.finish()
        }
    }

    var description: String { "reload" }
}
