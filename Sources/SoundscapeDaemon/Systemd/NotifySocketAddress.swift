import Glibc

/// The `NOTIFY_SOCKET` address as a `sockaddr_un`.
///
/// systemd 252 hands out either a filesystem path or, as `@name`, a name in the abstract
/// namespace; later versions may add `vsock:` addresses, which this daemon does not speak.
struct NotifySocketAddress: Sendable, Equatable {
    /// The significant bytes of `sun_path`. An abstract name is a leading NUL and the name
    /// with nothing after it: the kernel takes every byte up to the address length as part
    /// of the name, so trailing padding would name a different socket.
    let pathBytes: [UInt8]

    private static let pathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    init(parsing value: String) throws(SystemdNotifier.Failure) {
        let bytes = Array(value.utf8)
        guard bytes.count > 1, !bytes.contains(0) else { throw .unsupportedAddress(value) }
        switch bytes[0] {
        case UInt8(ascii: "/"):
            pathBytes = bytes + [0]
        case UInt8(ascii: "@"):
            pathBytes = [0] + bytes.dropFirst()
        default:
            throw .unsupportedAddress(value)
        }
        guard pathBytes.count <= Self.pathCapacity else { throw .unsupportedAddress(value) }
    }

    var isAbstract: Bool { pathBytes.first == 0 }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: pathBytes)
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + pathBytes.count
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}
