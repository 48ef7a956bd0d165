import Foundation
import SoundscapeCore
import SoundscapeSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for systemd's notification socket: a bound datagram socket
/// whose messages a test reads with a bounded wait.
final class DatagramListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = try UnixSocket.bind(.datagram, to: UnixSocketAddress(path: path))
    }

    deinit {
        close(fd)
    }

    /// The next datagram, or nil after `timeout`.
    func next(timeout: Duration) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(clamping: timeout.inMilliseconds(rounded: .up))) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Every datagram that arrives within `duration`, with arrival times.
    func collect(for duration: Duration) -> [(at: ContinuousClock.Instant, text: String)] {
        let deadline = ContinuousClock.now + duration
        var all: [(ContinuousClock.Instant, String)] = []
        while ContinuousClock.now < deadline {
            if let text = next(timeout: deadline - ContinuousClock.now) { all.append((ContinuousClock.now, text)) }
        }
        return all
    }
}
