#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain socket calls, for the situations a well-behaved client never creates: raw bytes,
/// half-closed connections, stale socket files, pre-bound listeners.
enum POSIXSocket {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// A new Unix stream socket bound to `path`; with `listening`, also listening.
    static func bound(to path: String, listening: Bool) throws -> Int32 {
        let descriptor = try makeSocket()
        try withAddress(path) { address, length in
            guard bind(descriptor, address, length) == 0 else { throw Failure(operation: "bind", code: errno) }
        }
        if listening {
            guard listen(descriptor, 16) == 0 else { throw Failure(operation: "listen", code: errno) }
        }
        return descriptor
    }

    /// Connected, with send and receive timeouts so that no test can block for long.
    static func connected(to path: String) throws -> Int32 {
        let descriptor = try makeSocket()
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try withAddress(path) { address, length in
            guard connect(descriptor, address, length) == 0 else {
                let code = errno
                close(descriptor)
                throw Failure(operation: "connect", code: code)
            }
        }
        return descriptor
    }

    private static func makeSocket() throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(operation: "socket", code: errno) }
        return descriptor
    }

    private static func withAddress(
        _ path: String,
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Void
    ) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { pathBytes in
            pathBytes.copyBytes(from: bytes)
            pathBytes[bytes.count] = 0
        }
        try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
