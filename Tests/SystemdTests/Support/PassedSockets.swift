import Foundation
import Glibc
import SoundscapeSystem
import Synchronization

/// Descriptors laid out as systemd passes them: consecutive numbers from a base.
///
/// systemd's base is 3, which in a test process belongs to someone else, so each test gets
/// a free range far above what the process uses.
final class PassedSockets {
    private static let nextBase = Mutex<CInt>(600)

    let base: CInt
    let count: CInt
    private let directory: String

    /// Each item becomes one descriptor at `base + index`, none of them close-on-exec.
    init(_ items: [Item]) throws {
        var template = Array("/tmp/systemd-tests.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno)!) }
        directory = String(cString: made)
        count = CInt(items.count)
        base = Self.nextBase.withLock { next in
            defer { next += 16 }
            return next
        }
        for (index, item) in items.enumerated() {
            let target = base + CInt(index)
            precondition(fcntl(target, F_GETFD) < 0, "descriptor \(target) is in use")
            let fd = try item.open(in: directory, index: index)
            guard dup2(fd, target) == target else { throw POSIXError(.init(rawValue: errno)!) }
            close(fd)
        }
    }

    deinit {
        for fd in base..<base + count { close(fd) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(of index: Int) -> String { directory + "/\(index)" }

    func isCloseOnExec(_ fd: CInt) -> Bool { fcntl(fd, F_GETFD) & FD_CLOEXEC != 0 }

    enum Item {
        case listeningUnixStream
        case unlistenedUnixStream
        case unixDatagram
        case listeningTCP
        case regularFile

        func open(in directory: String, index: Int) throws -> CInt {
            switch self {
            case .listeningUnixStream: return try unix(.stream, at: directory + "/\(index)", listening: true)
            case .unlistenedUnixStream: return try unix(.stream, at: directory + "/\(index)", listening: false)
            case .unixDatagram: return try unix(.datagram, at: directory + "/\(index)", listening: false)
            case .listeningTCP:
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
                return fd
            case .regularFile:
                let fd = Glibc.open(directory + "/\(index)", O_CREAT | O_RDWR, 0o600)
                guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
                return fd
            }
        }

        private func unix(_ kind: UnixSocket.Kind, at path: String, listening: Bool) throws -> CInt {
            try UnixSocket.bind(kind, to: UnixSocketAddress(path: path), listening: listening)
        }
    }
}
