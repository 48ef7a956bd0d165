/// Failures of ``VarlinkClient`` other than error replies (those are ``VarlinkError``).
public enum VarlinkClientError: Error, Sendable, Hashable {
    /// Nothing accepts connections at the path: typically the service is not running.
    case notReachable(path: String, reason: String)
    /// The connection closed before the call was answered.
    case connectionClosed
    /// The service sent something that is not a varlink reply; the connection is closed,
    /// since replies can no longer be matched to calls.
    case invalidReply(reason: String)
}

extension VarlinkClientError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notReachable(let path, let reason): "cannot reach varlink service at \(path): \(reason)"
        case .connectionClosed: "the varlink connection closed before the call was answered"
        case .invalidReply(let reason): "invalid varlink reply: \(reason)"
        }
    }
}
