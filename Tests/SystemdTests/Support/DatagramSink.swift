import Foundation
import Glibc
import SoundscapeSystem
import Synchronization

/// Stands in for systemd's notification socket: a datagram socket bound at a temporary
/// path or an abstract name, read without blocking.
///
/// The queue of a Unix datagram socket is short (net.unix.max_dgram_qlen, often 10), and
/// the notifier does not block when it is full, so waiting reads often enough to keep it empty.
final class DatagramSink: Sendable {
    /// The value for NOTIFY_SOCKET.
    let address: String
    private let fd: CInt
    private let directory: String?
    private let received = Mutex<[String]>([])

    enum Kind { case path, abstract }

    init(_ kind: Kind) throws {
        let socketAddress: UnixSocketAddress
        switch kind {
        case .path:
            var template = Array("/tmp/systemd-tests.XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno)!) }
            let dir = String(cString: made)
            directory = dir
            address = dir + "/notify"
            socketAddress = try UnixSocketAddress(path: address)
        case .abstract:
            directory = nil
            let name = "soundscaped-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            address = "@" + name
            socketAddress = try UnixSocketAddress(abstract: name)
        }
        // Bound with exactly the significant bytes: an abstract name bound with padding
        // would be another name, and the notifier's datagrams would not arrive.
        fd = try UnixSocket.bind(.datagram, to: socketAddress, nonBlocking: true)
    }

    deinit {
        close(fd)
        if let directory {
            unlink(directory + "/notify")
            rmdir(directory)
        }
    }

    /// Everything received so far, reading what is queued first.
    func messages() -> [String] {
        received.withLock { list in
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count >= 0 else { break }
                list.append(String(decoding: buffer[0..<count], as: UTF8.self))
            }
            return list
        }
    }

    /// Reads until `condition` holds or `timeout` passes; returns what arrived.
    @discardableResult
    func wait(timeout: Duration = .seconds(5), until condition: ([String]) -> Bool) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let list = messages()
            if condition(list) || ContinuousClock.now >= deadline { return list }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads for `duration`, keeping the queue drained, and returns what arrived.
    func collect(for duration: Duration) async -> [String] {
        await wait(timeout: duration) { _ in false }
    }
}
