import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What happens in a directory, as inotify reports it: a test waits for a file to be
/// created or written (an import's temporary file filling) rather than polling for it.
final class DirectoryEvents {
    private let descriptor: Int32
    private var pending: [(mask: UInt32, name: String)] = []

    /// Watches `directory` for files created, written and renamed into it.
    init(_ directory: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { throw HarnessError("inotify_init1: \(String(cString: strerror(errno)))") }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_MODIFY | IN_MOVED_TO)) >= 0 else {
            let why = String(cString: strerror(errno))
            close(descriptor)
            throw HarnessError("cannot watch \(directory): \(why)")
        }
    }

    deinit { close(descriptor) }

    /// The name of the first event `accept` takes (IN_CREATE, IN_MODIFY, IN_MOVED_TO in
    /// `mask`), waiting at most `timeout` from now.
    func next(timeout: Duration, _ what: String, accept: (_ mask: UInt32, _ name: String) -> Bool) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            while !pending.isEmpty {
                let event = pending.removeFirst()
                if accept(event.mask, event.name) { return event.name }
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw HarnessError("no event within \(timeout): \(what)") }
            var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            guard poll(&watched, 1, milliseconds) >= 0 || errno == EINTR else {
                throw HarnessError("poll: \(String(cString: strerror(errno)))")
            }
            readEvents()
        }
    }

    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        buffer.withUnsafeBytes { bytes in
            while offset + header <= count {
                let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let name = String(decoding: bytes[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }, as: UTF8.self)
                pending.append((mask, name))
                offset += header + length
            }
        }
    }
}
