#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Who is on the other end of a Unix socket: the kernel's word (`SO_PEERCRED`),
/// fixed when the peer connected.
struct PeerCredentials: Sendable, Equatable {
    // The layout of glibc's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc
    // module does not import (it needs _GNU_SOURCE); CSoundscapeSystem asserts the size.
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

enum PeerCheck {
    /// Closes `channel` at once unless its peer's uid is in `allowed` (nil allows anyone).
    /// A peer whose credentials cannot be read is refused too.
    static func refuse(_ channel: any Channel, unless allowed: Set<UInt32>?, log: @escaping @Sendable (String) -> Void) {
        guard let allowed else { return }
        guard let provider = channel as? any SocketOptionProvider else {
            log("varlink: cannot check who connected; closing the connection")
            channel.close(promise: nil)
            return
        }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        credentials.whenComplete { result in
            switch result {
            case .success(let peer) where allowed.contains(peer.uid):
                break
            case .success(let peer):
                log("varlink: refusing a connection from uid \(peer.uid) (pid \(peer.pid)): only the daemon's own user may connect")
                channel.close(promise: nil)
            case .failure(let error):
                log("varlink: cannot read who connected (\(error)); closing the connection")
                channel.close(promise: nil)
            }
        }
    }
}
