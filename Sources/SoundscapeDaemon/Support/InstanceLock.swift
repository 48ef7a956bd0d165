import Glibc
import SoundscapeSystem

/// One daemon per socket and per state directory: an exclusive `flock` on a
/// lock file beside each (`control.sock.lock`, `state/lock`), the way PipeWire
/// and Wayland compositors lock their sockets. A second daemon finds the lock
/// taken and stops at once, before it touches the socket or opens the
/// database: the first one's files are never altered. The kernel drops the lock
/// when the holder exits, however it exits, so a crash leaves nothing stale.
final class InstanceLock {
    struct Held: Error, CustomStringConvertible {
        let path: String
        let pid: Int32?
        var description: String {
            "already running (pid \(pid.map(String.init) ?? "unknown"), holding \(path))"
        }
    }

    private let descriptor: Int32
    let path: String

    /// Takes the lock at `path`, creating the file if it can; throws `Held` when
    /// another process holds it. A file that can be neither created nor opened
    /// (a read-only directory without one) yields nil: no lock, nothing to guard.
    static func acquire(_ path: String) throws(Held) -> InstanceLock? {
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 {
            // Read-only: a lock taken on a read-only descriptor works just as well.
            descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        }
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let pid = FileSystem.text(of: path).flatMap { Int32($0.split(separator: "\n").first ?? "") }
            close(descriptor)
            throw Held(path: path, pid: pid)
        }
        // Ours now: say who holds it (a failed write only loses the pid in a message).
        if ftruncate(descriptor, 0) == 0 {
            let text = "\(getpid())\n"
            _ = text.utf8CString.withUnsafeBufferPointer { buffer in
                FileSystem.writeAll(descriptor, UnsafeRawBufferPointer(start: buffer.baseAddress, count: buffer.count - 1))
            }
        }
        return InstanceLock(descriptor: descriptor, path: path)
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        close(descriptor)
    }
}
