import Glibc
import SoundscapeCore

/// Wakes when a file is written, replaced, created, removed or has its mode changed,
/// at no cost while it is not: an inotify watch on the file's directory (so a file
/// that does not exist yet, or an editor's save by rename, is seen too), read by a
/// thread blocked in `poll`.
public final class FileChangeWatch: Sendable {
    private let stopWrite: Int32

    /// Starts watching `path`; nil when its directory cannot be watched (then nothing is).
    public init?(path: String, onChange: @escaping @Sendable () -> Void) {
        let directory = FilePaths.parent(path)
        let name = String(path.dropFirst(directory.count).drop { $0 == "/" })
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0 else { return nil }
        let events = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
        guard inotify_add_watch(inotify, directory, UInt32(events)) >= 0, let stop = try? Spawn.pipe() else {
            close(inotify)
            return nil
        }
        stopWrite = stop.write
        BlockingThread.start {
            Self.watch(inotify: inotify, name: name, stop: stop.read, onChange: onChange)
            close(inotify)
            close(stop.read)
        }
    }

    /// Ends the thread.
    public func stop() {
        close(stopWrite)
    }

    private static func watch(inotify: Int32, name: String, stop: Int32, onChange: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptors = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else {
                if count < 0, errno == EINTR { continue }
                return
            }
            if names(in: buffer[..<count]).contains(name) { onChange() }
        }
    }

    /// The names the events in `bytes` are about.
    static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        let header = MemoryLayout<inotify_event>.size
        var offset = bytes.startIndex
        while offset + header <= bytes.endIndex {
            let length = bytes.withUnsafeBytes {
                Int($0.loadUnaligned(fromByteOffset: offset - bytes.startIndex + header - 4, as: UInt32.self))
            }
            let end = min(offset + header + length, bytes.endIndex)
            names.append(String(decoding: bytes[(offset + header)..<end].prefix { $0 != 0 }, as: UTF8.self))
            offset += header + length
        }
        return names
    }
}
