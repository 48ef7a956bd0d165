#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``VarlinkServer/run(onListening:)`` could not start.
public enum VarlinkServerError: Error, Sendable, Hashable {
    /// Another server answers on the socket path; starting would steal its address.
    case alreadyServed(path: String)
    /// Something other than a socket is in the way; it is not ours to delete.
    case pathIsNotASocket(path: String)
    case fileSystem(path: String, operation: String, errno: Int32)
}

extension VarlinkServerError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .alreadyServed(let path):
            "another server is already listening on \(path)"
        case .pathIsNotASocket(let path):
            "\(path) exists and is not a socket"
        case .fileSystem(let path, let operation, let errno):
            "\(operation) \(path): \(String(cString: strerror(errno)))"
        }
    }
}
