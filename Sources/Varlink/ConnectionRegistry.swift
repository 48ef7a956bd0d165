import NIOCore
import Synchronization

/// The server's listener and open connections, and what each connection is doing: what a
/// graceful shutdown needs to stop the server without dropping an answer it owes.
///
/// A graceful shutdown closes the listener first (the socket itself may stay open in
/// another image's hands, its new connections waiting in its backlog), then every
/// connection that owes nothing: one between calls, or one whose `more` call has given its
/// first reply (the client has its answer; a stream may end with its connection). A call
/// that has not yet answered keeps its connection until it does, or until the grace runs
/// out; its connection then closes without taking another call. A connection that has not
/// made its first call yet is a client that connected while the server still accepted,
/// its call on the way: that call is taken and answered too.
final class ConnectionRegistry: Sendable {
    typealias ID = Int

    private enum Activity {
        /// Accepted; its first call not read yet.
        case fresh
        /// Waiting for the client's next call.
        case idle
        /// In a call that has sent no reply yet.
        case owingAnswer
        /// In a `more` call that has replied and goes on.
        case streaming
    }

    private enum Phase {
        case serving
        /// Closing: the listener is closed, connections close as they come to owe nothing.
        case draining
        /// Cancelled: everything is closed at once.
        case stopped
    }

    private struct Entry {
        let channel: any Channel
        var activity: Activity
    }

    private struct State {
        var phase = Phase.serving
        var listener: (any Channel)?
        var connections: [ID: Entry] = [:]
        var nextID = 0
        var graceTimer: Scheduled<Void>?
    }

    private let state = Mutex(State())
    private let grace: Duration
    private let log: @Sendable (String) -> Void

    init(grace: Duration, log: @escaping @Sendable (String) -> Void) {
        self.grace = grace
        self.log = log
    }

    var isServing: Bool { state.withLock { $0.phase == .serving } }

    /// Records the listener; false when the server is already shutting down (close it).
    func listening(on channel: any Channel) -> Bool {
        state.withLock { state in
            guard state.phase == .serving else { return false }
            state.listener = channel
            return true
        }
    }

    /// A new connection's id; nil when the server has stopped (close it unserved). One
    /// accepted in the instant the listener closed for a graceful shutdown is served.
    func add(_ channel: any Channel) -> ID? {
        state.withLock { state in
            guard state.phase != .stopped else { return nil }
            state.nextID += 1
            state.connections[state.nextID] = Entry(channel: channel, activity: .fresh)
            return state.nextID
        }
    }

    func remove(_ id: ID) {
        state.withLock { $0.connections[id] = nil }
    }

    /// Whether to take the call just read: not once the server is shutting down, unless it
    /// is the connection's first.
    func beginCall(_ id: ID) -> Bool {
        state.withLock { state in
            guard let entry = state.connections[id],
                state.phase == .serving || (state.phase == .draining && entry.activity == .fresh)
            else { return false }
            state.connections[id]?.activity = .owingAnswer
            return true
        }
    }

    /// A `more` call replied and goes on; while shutting down, its connection closes now.
    func streaming(_ id: ID) {
        let close = state.withLock { state -> (any Channel)? in
            state.connections[id]?.activity = .streaming
            return state.phase == .serving ? nil : state.connections[id]?.channel
        }
        close?.close(promise: nil)
    }

    /// Whether to read the connection's next call: not once the server is shutting down.
    func endCall(_ id: ID) -> Bool {
        state.withLock { state in
            state.connections[id]?.activity = .idle
            return state.phase == .serving
        }
    }

    /// Starts a graceful shutdown (again: no change): closes the listener and every
    /// connection that owes nothing, and closes the rest once the grace runs out. The
    /// future completes when the listener is closed.
    func drain() -> EventLoopFuture<Void>? {
        let (listener, idle, started) = state.withLock { state -> ((any Channel)?, [any Channel], Bool) in
            guard state.phase == .serving else { return (nil, [], false) }
            state.phase = .draining
            let idle = state.connections.values.filter { $0.activity == .idle || $0.activity == .streaming }.map(\.channel)
            return (state.listener, idle, true)
        }
        guard started, let listener else { return nil }
        for channel in idle { channel.close(promise: nil) }
        let timer = listener.eventLoop.scheduleTask(in: TimeAmount(grace)) { [self] in
            let late = state.withLock { $0.connections.values.map(\.channel) }
            guard !late.isEmpty else { return }
            log("varlink: stopping; closing \(late.count) connection(s) whose call did not answer within \(grace)")
            for channel in late { channel.close(promise: nil) }
        }
        state.withLock { $0.graceTimer = timer }
        let closed = listener.eventLoop.makePromise(of: Void.self)
        listener.close(promise: closed)
        return closed.futureResult.recover { _ in }
    }

    /// Cancellation: closes the listener and every connection at once.
    func stop() {
        let (channels, timer) = state.withLock { state -> ([any Channel], Scheduled<Void>?) in
            state.phase = .stopped
            defer { state.graceTimer = nil }
            return ([state.listener].compactMap { $0 } + state.connections.values.map(\.channel), state.graceTimer)
        }
        timer?.cancel()
        for channel in channels { channel.close(promise: nil) }
    }

    var isStopped: Bool { state.withLock { $0.phase == .stopped } }

    /// The server has returned: the grace has nothing left to end.
    func finished() {
        let timer = state.withLock { state in
            defer { state.graceTimer = nil }
            return state.graceTimer
        }
        timer?.cancel()
    }
}
