/// Why ``VarlinkCall/reply(_:continues:)`` could not send.
public enum VarlinkReplyError: Error, Sendable, Hashable {
    /// The call already got its final reply (or error); varlink allows nothing after it.
    case callAlreadyAnswered
    /// The client is gone. A handler streaming replies should stop.
    case connectionClosed
}
