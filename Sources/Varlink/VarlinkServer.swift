import NIOCore
import NIOPosix

/// A varlink service on a Unix socket.
///
/// Every connection is served by one child task; see ``VarlinkInterface`` for how calls
/// reach handlers and ``Limits`` for what protects the server from misbehaving clients.
public struct VarlinkServer: Sendable {
    public enum Listener: Sendable, Hashable {
        /// Bind this path (see ``VarlinkServer/run(onListening:)`` for how it is prepared).
        case unixPath(String)
        /// A socket already bound and listening, e.g. passed in by systemd socket
        /// activation. It is left to its owner's management: no file is created or removed.
        case boundFileDescriptor(CInt)
    }

    /// What `org.varlink.service.GetInfo` reports.
    public struct ServiceInfo: Sendable, Hashable {
        public var vendor: String
        public var product: String
        public var version: String
        public var url: String

        public init(vendor: String, product: String, version: String, url: String) {
            self.vendor = vendor
            self.product = product
            self.version = version
            self.url = url
        }
    }

    public struct Limits: Sendable, Hashable {
        /// Largest message accepted from a client. A client that exceeds it gets
        /// ``VarlinkError/messageTooLarge(limit:)`` and is disconnected.
        public var maxMessageBytes: Int
        /// Connections beyond this many are closed as soon as they are accepted.
        public var maxConnections: Int
        /// Bytes of unfinished messages held for all connections together. A connection
        /// whose unfinished message would pass it gets ``VarlinkError/serverBusy()`` and
        /// is disconnected, so many half-sent messages cannot fill the server's memory.
        public var maxBufferedBytes: Int
        /// How long part of a message may sit unfinished before the connection is closed.
        public var partialMessageTimeout: Duration
        /// The user ids whose connections are served (`SO_PEERCRED`); nil serves anyone
        /// who can reach the socket. Others are closed at once.
        public var allowedUIDs: Set<UInt32>?
        /// How long a graceful shutdown (``VarlinkServer/shutDownGracefully()``) waits for
        /// the calls in progress to answer before it closes their connections.
        public var shutdownGrace: Duration

        public init(
            maxMessageBytes: Int = 64 * 1024, maxConnections: Int = 4096,
            maxBufferedBytes: Int = 4 << 20, partialMessageTimeout: Duration = .seconds(10),
            allowedUIDs: Set<UInt32>? = nil, shutdownGrace: Duration = .seconds(2)
        ) {
            self.maxMessageBytes = maxMessageBytes
            self.maxConnections = maxConnections
            self.maxBufferedBytes = maxBufferedBytes
            self.partialMessageTimeout = partialMessageTimeout
            self.allowedUIDs = allowedUIDs
            self.shutdownGrace = shutdownGrace
        }
    }

    private let listener: Listener
    private let dispatcher: CallDispatcher
    private let eventLoopGroup: any EventLoopGroup
    private let limits: Limits
    private let budget: InboundBudget
    private let registry: ConnectionRegistry
    private let onDrained: @Sendable () -> Void

    /// - Parameter logger: Receives the few events worth an operator's attention (handler
    ///   failures, refused and oversized connections). A plain closure keeps this library
    ///   free of a logging dependency. Clients can trigger these: rate-limit them.
    /// - Parameter onDrained: Called when the open connections fall back to a few after
    ///   many (a burst of clients came and went): the moment to give freed memory back.
    public init(
        listener: Listener,
        interfaces: [any VarlinkInterface],
        info: ServiceInfo,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: @escaping @Sendable (String) -> Void = { _ in },
        limits: Limits = Limits(),
        onDrained: @escaping @Sendable () -> Void = {}
    ) {
        let names = [ServiceInterface.interfaceName] + interfaces.map(\.name)
        precondition(Set(names).count == names.count, "varlink interface names must be unique: \(names)")
        let all: [any VarlinkInterface] = [ServiceInterface(info: info, serving: interfaces)] + interfaces
        self.listener = listener
        self.dispatcher = CallDispatcher(
            interfaces: Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) }),
            log: logger
        )
        self.eventLoopGroup = eventLoopGroup
        self.limits = limits
        budget = InboundBudget(limit: limits.maxBufferedBytes)
        registry = ConnectionRegistry(grace: limits.shutdownGrace, log: logger)
        self.onDrained = onDrained
    }

    /// Stops the server gracefully: it accepts no more connections, closes those between
    /// calls, and lets each call in progress give its answer (a `more` call, its first)
    /// within ``Limits/shutdownGrace``, as well as the first call of a connection accepted
    /// but yet to make one; ``run(onListening:)`` returns once all are closed.
    /// Returns once no new connection is accepted: a client that connects after that waits
    /// in the socket's backlog, for whoever listens on it next.
    ///
    /// Cancelling ``run(onListening:)`` still stops at once, cancelling the calls.
    public func shutDownGracefully() async {
        try? await registry.drain()?.get()
    }

    /// Serves until ``shutDownGracefully()`` or until the task is cancelled, which closes the
    /// listener and every connection (cancelling running handlers) at once, and returns.
    ///
    /// For ``Listener/unixPath(_:)`` it first creates a missing parent directory (0700),
    /// refuses to start if another server answers on the path, removes a stale socket file,
    /// and makes the new socket file 0600; it removes the file again on return.
    ///
    /// - Parameter onListening: Called once the socket accepts connections, e.g. to tell
    ///   systemd the service is ready.
    public func run(onListening: @Sendable () -> Void = {}) async throws {
        let listening = try await bind()
        defer { listening.removeSocketFile() }
        guard registry.listening(on: listening.channel.channel) else {
            try? await listening.channel.channel.close()
            return
        }
        onListening()

        // Cancellation stops the server by closing the listener, not by cancelling the
        // accept loop: NIO would drop connections accepted but not yet handed to the loop,
        // and dropping an unserved connection traps. Closed, the listener still delivers
        // those, and the loop closes them. The loop runs in a task of its own only so that
        // this task's cancellation does not reach it; it is always awaited.
        let listener = listening.channel
        let acceptLoop = Task { [registry] in
            defer { registry.finished() }
            try await serve(listener)
        }
        try await withTaskCancellationHandler {
            try await acceptLoop.value
        } onCancel: { [registry] in
            registry.stop()
            listener.channel.close(promise: nil)
        }
    }

    /// Accepts connections until the listener closes; then closes them all, or, shutting
    /// down gracefully, waits for them to close.
    private func serve(_ listener: NIOAsyncChannel<ConnectionChannel, Never>) async throws {
        let slots = ConnectionSlots(limit: limits.maxConnections, onDrained: onDrained)
        try await listener.executeThenClose { connections in
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in connections {
                    guard await slots.acquire() else {
                        dispatcher.log("varlink: refusing a connection: \(limits.maxConnections) already open")
                        try? await connection.executeThenClose { _, _ in }
                        continue
                    }
                    guard let id = registry.add(connection.channel) else {
                        // Accepted in the instant the listener closed, for a server cancelled.
                        try? await connection.executeThenClose { _, _ in }
                        await slots.release()
                        continue
                    }
                    group.addTask { [dispatcher, limits, registry] in
                        await ServerConnection(
                            channel: connection,
                            dispatcher: dispatcher,
                            maxMessageBytes: limits.maxMessageBytes,
                            registry: registry,
                            id: id
                        ).serve()
                        registry.remove(id)
                        await slots.release()
                    }
                }
                if registry.isServing || registry.isStopped { group.cancelAll() }
            }
        }
    }

    private typealias ConnectionChannel = NIOAsyncChannel<VarlinkFrame, ByteBuffer>

    /// The listening channel, and how to clean up after it.
    private struct Listening {
        let channel: NIOAsyncChannel<ConnectionChannel, Never>
        let removeSocketFile: () -> Void
    }

    private func bind() async throws -> Listening {
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            // A client may shut down its sending side and still wait for its replies.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializeConnection: @Sendable (any Channel) -> EventLoopFuture<ConnectionChannel> = {
            [maxMessageBytes = limits.maxMessageBytes, budget, limits, dispatcher] channel in
            PeerCheck.refuse(channel, unless: limits.allowedUIDs, log: dispatcher.log)
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(
                        VarlinkFrameDecoder(
                            maxMessageBytes: maxMessageBytes, budget: budget,
                            partialTimeout: TimeAmount(limits.partialMessageTimeout),
                            onTimeout: {
                                dispatcher.log("varlink: closing a connection that left a message unfinished for \(limits.partialMessageTimeout)")
                            }))
                )
                let connection = try ConnectionChannel(wrappingChannelSynchronously: channel)
                // A connection accepted in the instant the listener closes is dropped by NIO
                // without reaching the accept loop, and dropping it traps while its channel
                // is open. Referenced until the channel closes (when the client hangs up),
                // it is released only once that is harmless.
                channel.closeFuture.whenComplete { _ in withExtendedLifetime(connection) {} }
                return connection
            }
        }

        switch listener {
        case .boundFileDescriptor(let descriptor):
            let channel = try await bootstrap.bind(descriptor, childChannelInitializer: initializeConnection)
            return Listening(channel: channel, removeSocketFile: {})
        case .unixPath(let path):
            try await SocketFile.prepare(path, eventLoopGroup: eventLoopGroup)
            let channel = try await bootstrap.bind(
                unixDomainSocketPath: path,
                childChannelInitializer: initializeConnection
            )
            let identity = SocketFile.identity(of: path)
            let removeSocketFile = { SocketFile.remove(path, ifStill: identity) }
            do {
                try SocketFile.restrictToOwner(path)
            } catch {
                try? await channel.channel.close()
                removeSocketFile()
                throw error
            }
            return Listening(channel: channel, removeSocketFile: removeSocketFile)
        }
    }
}
