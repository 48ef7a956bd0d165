import CPipeWire
import CSoundscapeShims
import Logging
import SoundscapeCore
import SoundscapeSystem

/// What the connection keeper tells its owner (the output), on the loop thread.
protocol ConnectionKeeperDelegate: AnyObject {
    /// A new connection; its stream exists and is inactive.
    func connectionOpened(_ connection: StreamConnection)
    /// The connection was closed: what belonged to it is gone.
    func connectionClosed()
    /// The server went away, or cannot be reached (said once per series of failures).
    func disconnected(reason: String)
}

/// Keeps one connection to the PipeWire server: connects on `start`, and when
/// the server goes away or cannot be reached tries again with backoff (0.25 s
/// doubling to 10 s), and at once when the server's socket appears (a watch on
/// its directory, which exists only while the server is away).
///
/// Loop thread only, with the thread loop's lock held.
final class ConnectionKeeper {
    enum State {
        /// `start` has not been called.
        case notStarted
        case connected(StreamConnection)
        /// The server went away (the core reported `-EPIPE`). The dead
        /// connection is closed when the retry timer fires, outside PipeWire's callback.
        case lost(StreamConnection)
        /// No connection; a retry is due (the timer is armed, the socket watched).
        case retrying
        case shutDown
    }

    private(set) var state: State = .notStarted
    /// Delays between attempts; reset by a connection, and by the server coming back.
    private var retryDelays: Backoff
    private var retryTimer: LoopTimer!
    /// While the server is away: its socket's directory, watched (see `ServerSocketWatch`).
    private var socketWatch: (watch: ServerSocketWatch, source: UnsafeMutablePointer<spa_source>)?
    private let loop: UnsafeMutablePointer<pw_loop>
    private let connect: () throws(StreamConnection.ConnectError) -> StreamConnection
    private let logger: Logger
    unowned let delegate: any ConnectionKeeperDelegate

    init(
        loop: UnsafeMutablePointer<pw_loop>, retryDelays: Backoff, logger: Logger, delegate: any ConnectionKeeperDelegate,
        connect: @escaping () throws(StreamConnection.ConnectError) -> StreamConnection
    ) {
        self.loop = loop
        self.retryDelays = retryDelays
        self.logger = logger
        self.delegate = delegate
        self.connect = connect
        retryTimer = LoopTimer(loop: loop) { [unowned self] in retryDue() }
    }

    /// Removes the timer and the socket watch; on the loop thread, or once it has stopped.
    func destroy() {
        retryTimer.destroy()
        stopWatchingForServer()
    }

    /// The connection, also while it is lost and not yet closed.
    var connection: StreamConnection? {
        switch state {
        case .connected(let connection), .lost(let connection): connection
        case .notStarted, .retrying, .shutDown: nil
        }
    }

    /// The connection while the server is there.
    var liveConnection: StreamConnection? {
        if case .connected(let connection) = state { connection } else { nil }
    }

    var isShutDown: Bool {
        if case .shutDown = state { true } else { false }
    }

    /// Starts connecting, and keeps reconnecting.
    func start() {
        guard case .notStarted = state else { return }
        state = .retrying
        attempt()
    }

    /// Drops the connection and connects again at once: the watchdog's last resort.
    func reconnect(reason: String) {
        switch state {
        case .notStarted, .shutDown: return
        case .connected, .lost, .retrying: break
        }
        logger.warning("reconnecting to PipeWire", metadata: ["reason": "\(reason)"])
        close()
        delegate.disconnected(reason: reason)
        retryDelays.reset()
        attempt()
    }

    /// The core reported the server gone (from PipeWire's callback: nothing is closed here).
    func serverLost(_ message: String) {
        guard case .connected(let connection) = state else { return }
        logger.warning("lost the PipeWire server", metadata: ["error": "\(message)"])
        delegate.disconnected(reason: message)
        state = .lost(connection)
        retryDelays.reset()
        watchForServer()
        retryTimer.arm(after: retryDelays.next())
    }

    /// Disconnects for good (daemon shutdown).
    func shutdown() {
        retryTimer.disarm()
        stopWatchingForServer()
        close()
        state = .shutDown
    }

    private func attempt() {
        guard case .retrying = state else { return }
        do {
            let connection = try connect()
            state = .connected(connection)
            retryDelays.reset()
            stopWatchingForServer()
            delegate.connectionOpened(connection)
        } catch {
            let delay = retryDelays.next()
            logger.debug("PipeWire not reachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(delay)"])
            if retryDelays.current == retryDelays.initial {
                delegate.disconnected(reason: "\(error)")
            }
            watchForServer()
            retryTimer.arm(after: delay)
        }
    }

    /// Closes the connection, if any; the owner drops what belonged to it.
    private func close() {
        guard let connection else { return }
        state = .retrying
        connection.close()
        delegate.connectionClosed()
    }

    private func retryDue() {
        if case .lost = state { close() }
        attempt()
    }

    // MARK: The server's socket

    private func watchForServer() {
        guard socketWatch == nil, !isShutDown, let watch = ServerSocketWatch(environment: FileSystem.environment()) else {
            return
        }
        let source = scs_loop_add_io_in(
            loop, watch.fd,
            { data, _, _ in
                Unmanaged<ConnectionKeeper>.fromOpaque(data!).takeUnretainedValue().serverSocketChanged()
            }, Unmanaged.passUnretained(self).toOpaque())
        guard let source else { return }
        socketWatch = (watch, source)
    }

    private func stopWatchingForServer() {
        guard let socketWatch else { return }
        scs_loop_destroy_source(loop, socketWatch.source)
        self.socketWatch = nil
    }

    /// The socket's directory changed: if the socket appeared, connect now, not at the
    /// backoff's next step. 20 ms later, since the server binds a moment before it listens.
    private func serverSocketChanged() {
        guard let socketWatch, socketWatch.watch.socketAppeared() else { return }
        switch state {
        case .notStarted, .shutDown: return
        case .connected, .lost, .retrying: break
        }
        logger.debug("PipeWire's socket appeared; connecting")
        retryDelays.reset()
        retryTimer.arm(after: .milliseconds(20))
    }
}
