import NIOCore

/// A call awaiting its replies, as the client's reply reader sees it. Type-erased, so calls
/// decoding into different types share one queue.
struct PendingCall: Sendable {
    /// Consumes one reply and returns whether it ended the call. Throws if the reply cannot
    /// be decoded, which leaves nothing sensible to do with the connection but close it.
    let receive: @Sendable (ByteBuffer) throws -> Bool
    /// Ends the call without a reply.
    let fail: @Sendable (any Error) -> Void
}
