import Glibc

/// A client's stream socket to a Unix socket path, connected and blocking
/// (`SOCK_CLOEXEC`). Shared by the desktop companion and the benchmark's probe;
/// the daemon's own sockets go through NIO.
public enum UnixSocket {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The connected descriptor, which the caller closes.
    public static func connect(path: String) throws(Failure) -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw Failure(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot connect to \(path): \(reason)")
        }
        return fd
    }
}
