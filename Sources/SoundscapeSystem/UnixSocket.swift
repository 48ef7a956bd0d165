import Glibc
import SoundscapeCore

/// Unix-domain sockets made with plain system calls: for the parts that run no
/// NIO event loop (the desktop companion, the signer host's and systemd's
/// notify sockets, the benchmark's probe, the tests' hostile clients). The
/// daemon's control socket goes through NIO. Every socket is close-on-exec.
public enum UnixSocket {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }

        /// `what` failed with the current `errno`.
        static func system(_ what: String) -> Failure {
            Failure(description: "\(what): \(String(cString: strerror(errno)))")
        }
    }

    public enum Kind: Sendable {
        case stream, datagram

        var type: Int32 {
            switch self {
            case .stream: Int32(SOCK_STREAM.rawValue)
            case .datagram: Int32(SOCK_DGRAM.rawValue)
            }
        }
    }

    /// A new socket, unbound and unconnected, which the caller closes.
    public static func make(_ kind: Kind, nonBlocking: Bool = false) throws(Failure) -> CInt {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(AF_UNIX, kind.type | flags, 0)
        guard fd >= 0 else { throw .system("socket") }
        return fd
    }

    /// A stream socket connected to `path`, blocking; the caller closes it.
    public static func connect(path: String) throws(Failure) -> CInt {
        let address = try UnixSocketAddress(path: path)
        let fd = try make(.stream)
        let connected = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot connect to \(path): \(reason)")
        }
        return fd
    }

    /// A socket bound to `address` (a stream socket also listening, if asked);
    /// the caller closes it and removes a file it made.
    public static func bind(
        _ kind: Kind, to address: UnixSocketAddress, listening: Bool = false,
        nonBlocking: Bool = false
    ) throws(Failure) -> CInt {
        let fd = try make(kind, nonBlocking: nonBlocking)
        guard address.withSockaddr({ Glibc.bind(fd, $0, $1) }) == 0 else {
            let failure = Failure.system("cannot bind \(address)")
            close(fd)
            throw failure
        }
        if listening, listen(fd, 16) != 0 {
            let failure = Failure.system("cannot listen on \(address)")
            close(fd)
            throw failure
        }
        return fd
    }

    /// Sends one datagram to `address` from a socket of its own.
    public static func send(_ message: [UInt8], to address: UnixSocketAddress) throws(Failure) {
        let fd = try make(.datagram)
        defer { close(fd) }
        let sent = address.withSockaddr { target, length in
            message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), target, length) }
        }
        guard sent >= 0 else { throw .system("cannot send to \(address)") }
    }

    /// Bounds every blocking send and receive on `fd` (`SO_SNDTIMEO`, `SO_RCVTIMEO`):
    /// a call that waits longer fails with `EAGAIN`.
    public static func setTimeouts(_ fd: CInt, send: Duration?, receive: Duration?) {
        for (option, timeout) in [(SO_SNDTIMEO, send), (SO_RCVTIMEO, receive)] {
            guard let timeout else { continue }
            let microseconds = timeout.inMicroseconds(rounded: .up)
            var value = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
            setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }
}

/// A Unix-domain socket address: a path in the file system, or a name in the
/// Linux abstract namespace, as `sockaddr_un` takes them.
public struct UnixSocketAddress: Sendable, Equatable, CustomStringConvertible {
    /// The significant bytes of `sun_path`: a path and its NUL, or a NUL and an abstract
    /// name with nothing after it. The kernel takes every byte up to the address length
    /// as part of an abstract name, so trailing padding would name a different socket.
    public let pathBytes: [UInt8]

    /// The room in `sun_path` (108 bytes on Linux).
    public static let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// A path in the file system.
    public init(path: String) throws(UnixSocket.Failure) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, !bytes.contains(0) else { throw UnixSocket.Failure(description: "not a socket path: \(path)") }
        guard bytes.count < Self.capacity else { throw UnixSocket.Failure(description: "socket path too long: \(path)") }
        pathBytes = bytes + [0]
    }

    /// A name in the abstract namespace (no file; gone when the socket closes).
    public init(abstract name: String) throws(UnixSocket.Failure) {
        let bytes = Array(name.utf8)
        guard !bytes.contains(0) else { throw UnixSocket.Failure(description: "a NUL in the socket name @\(name)") }
        guard bytes.count < Self.capacity else { throw UnixSocket.Failure(description: "socket name too long: @\(name)") }
        pathBytes = [0] + bytes
    }

    /// An absolute path, or `@name` for the abstract namespace: the notation of
    /// systemd's `NOTIFY_SOCKET` (and of `ss`). Anything else is refused.
    public init(notation: String) throws(UnixSocket.Failure) {
        let bytes = Array(notation.utf8)
        guard bytes.count > 1, !bytes.contains(0) else {
            throw UnixSocket.Failure(description: "not an absolute path or @name: \(notation)")
        }
        switch bytes[0] {
        case UInt8(ascii: "/"): try self.init(path: notation)
        case UInt8(ascii: "@"): try self.init(abstract: String(decoding: bytes.dropFirst(), as: UTF8.self))
        default: throw UnixSocket.Failure(description: "not an absolute path or @name: \(notation)")
        }
    }

    public var isAbstract: Bool { pathBytes.first == 0 }

    /// The path, or `@name` for an abstract name.
    public var description: String {
        isAbstract
            ? "@" + String(decoding: pathBytes.dropFirst(), as: UTF8.self)
            : String(decoding: pathBytes.dropLast(), as: UTF8.self)
    }

    /// Calls `body` with the address as a `sockaddr` and its exact length.
    public func withSockaddr<Result, Failure: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + pathBytes.count)
        return try withUnsafePointer(to: &address) { pointer throws(Failure) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(Failure) in try body(raw, length) }
        }
    }
}
