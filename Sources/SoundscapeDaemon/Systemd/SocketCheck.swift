import Glibc

/// Checks on descriptors systemd passed, before NIO is trusted with them.
///
/// A unit file edited to pass a FIFO, a datagram socket or a TCP port would otherwise
/// fail later and obscurely inside the event loop; here it fails at start with a message
/// that names the descriptor and what is wrong with it.
enum SocketCheck {
    static func closeOnExec(_ fd: CInt) -> SocketActivationError? {
        let flags = fcntl(fd, F_GETFD)
        guard flags >= 0 else {
            return errno == EBADF ? .notOpen(descriptor: fd) : .systemCallFailed("fcntl(F_GETFD)", descriptor: fd, errno: errno)
        }
        guard flags & FD_CLOEXEC == 0 else { return nil }
        guard fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else {
            return .systemCallFailed("fcntl(F_SETFD)", descriptor: fd, errno: errno)
        }
        return nil
    }

    static func listeningUnixStream(_ fd: CInt) -> SocketActivationError? {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return errno == EBADF ? .notOpen(descriptor: fd) : .systemCallFailed("fstat", descriptor: fd, errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .notASocket(descriptor: fd) }

        switch option(SO_TYPE, of: fd) {
        case .failure(let error): return error
        case .success(let type) where type != CInt(SOCK_STREAM.rawValue): return .notStream(descriptor: fd, type: type)
        case .success: break
        }

        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return .systemCallFailed("getsockname", descriptor: fd, errno: errno) }
        guard CInt(address.ss_family) == AF_UNIX else { return .notUnixFamily(descriptor: fd, family: CInt(address.ss_family)) }

        switch option(SO_ACCEPTCONN, of: fd) {
        case .failure(let error): return error
        case .success(let listening) where listening == 0: return .notListening(descriptor: fd)
        case .success: return nil
        }
    }

    private static func option(_ name: CInt, of fd: CInt) -> Result<CInt, SocketActivationError> {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else {
            return .failure(.systemCallFailed("getsockopt", descriptor: fd, errno: errno))
        }
        return .success(value)
    }
}
