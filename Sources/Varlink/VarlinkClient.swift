import NIOCore
import NIOPosix

/// A connection to a varlink service on a Unix socket.
///
/// Calls may be made concurrently from several tasks; they are pipelined on the one
/// connection and each gets its own replies. Call ``close()`` when done.
public final class VarlinkClient: Sendable {
    private let channel: any Channel
    private let replies: NIOLoopBound<ClientReplyHandler>

    private init(channel: any Channel, replies: NIOLoopBound<ClientReplyHandler>) {
        self.channel = channel
        self.replies = replies
    }

    /// Throws ``VarlinkClientError/notReachable(path:reason:)`` for any connection failure
    /// (no socket file, nobody listening, no permission), so a CLI can report "service not
    /// running" with a distinct exit status.
    ///
    /// - Parameter maxMessageBytes: Largest reply accepted; larger ones close the
    ///   connection rather than grow a buffer without bound.
    /// - Parameter timeout: How long the connection may take (a full listen backlog).
    public static func connect(
        unixPath: String,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxMessageBytes: Int = 16 * 1024 * 1024,
        timeout: Duration = .seconds(10)
    ) async throws -> VarlinkClient {
        do {
            let (channel, replies) = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(TimeAmount(timeout))
                .connect(unixDomainSocketPath: unixPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let replies = ClientReplyHandler()
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)),
                            replies
                        )
                        return (channel, NIOLoopBound(replies, eventLoop: channel.eventLoop))
                    }
                }
            return VarlinkClient(channel: channel, replies: replies)
        } catch {
            throw VarlinkClientError.notReachable(path: unixPath, reason: "\(error)")
        }
    }

    /// Calls `method` and returns the reply's parameters. An error reply is thrown as
    /// ``VarlinkError``.
    public func call(_ method: String, parameters: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        try await call(method, parameters: parameters, returning: [String: JSONValue].self)
    }

    /// Like ``call(_:parameters:)`` with parameters and reply as `Codable` types.
    public func call<Parameters: Encodable, Reply: Decodable & Sendable>(
        _ method: String,
        parameters: Parameters,
        returning: Reply.Type = Reply.self
    ) async throws -> Reply {
        for try await reply in start(method, parameters: parameters, more: false, returning: Reply.self) {
            return reply
        }
        try Task.checkCancellation()
        throw VarlinkClientError.connectionClosed
    }

    /// Calls `method` with `more` and yields each reply; the stream ends after the final
    /// reply and throws an error reply as ``VarlinkError``.
    ///
    /// Varlink cannot cancel a single call, so abandoning the stream before its end (leaving
    /// the loop, cancelling the task) closes the connection; other calls on it fail with
    /// ``VarlinkClientError/connectionClosed``. Replies are buffered until consumed.
    public func callMore(
        _ method: String,
        parameters: [String: JSONValue] = [:]
    ) -> AsyncThrowingStream<[String: JSONValue], any Error> {
        callMore(method, parameters: parameters, returning: [String: JSONValue].self)
    }

    /// Like ``callMore(_:parameters:)`` with parameters and replies as `Codable` types.
    public func callMore<Parameters: Encodable, Reply: Decodable & Sendable>(
        _ method: String,
        parameters: Parameters,
        returning: Reply.Type = Reply.self
    ) -> AsyncThrowingStream<Reply, any Error> {
        start(method, parameters: parameters, more: true, returning: Reply.self)
    }

    public func close() async {
        try? await channel.close()
    }

    private func start<Reply: Decodable & Sendable>(
        _ method: String,
        parameters: some Encodable,
        more: Bool,
        returning: Reply.Type
    ) -> AsyncThrowingStream<Reply, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Reply.self)
        let message: ByteBuffer
        do {
            message = try CallEncoding.call(method, parameters: parameters, more: more)
        } catch {
            continuation.finish(throwing: error)
            return stream
        }
        if more {
            continuation.onTermination = { [channel] termination in
                if case .cancelled = termination { channel.close(promise: nil) }
            }
        }
        // A cancelled plain call stays queued and swallows its reply, keeping later calls in step.
        let call = PendingCall(
            receive: { message in
                let reply = try JSONCoding.decode(ReplyEnvelope<Reply>.self, from: message)
                let isLast = !more || !reply.continues
                continuation.yield(with: reply.result.mapError { $0 })
                if isLast { continuation.finish() }
                return isLast
            },
            fail: { continuation.finish(throwing: $0) }
        )
        channel.eventLoop.execute { [replies, channel] in
            replies.value.send(message, for: call, on: channel)
        }
        return stream
    }
}
