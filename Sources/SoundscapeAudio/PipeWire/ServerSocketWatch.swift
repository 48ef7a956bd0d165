import Glibc
import SoundscapeCore

/// Tells when PipeWire's socket appears, so that a server that comes back is
/// connected to at once rather than at the next step of the reconnect backoff
/// (up to 10 s later). Exists only while the server is away: an inotify watch
/// on the socket's directory for the socket's name being created (bind) or
/// moved in. While connected there is no watch, so no wake-ups from other
/// files in `$XDG_RUNTIME_DIR`.
final class ServerSocketWatch {
    let fd: Int32
    private let name: String

    /// nil when the socket's place is unknown or inotify is unavailable (then
    /// the backoff alone reconnects).
    init?(environment: [String: String]) {
        guard let (directory, name) = Self.socketPlace(environment: environment) else { return nil }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.name = name
    }

    deinit {
        close(fd)
    }

    /// Reads what happened; true when the socket was among it.
    func socketAppeared() -> Bool {
        var appeared = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return appeared }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes {
                    Int($0.loadUnaligned(fromByteOffset: offset + header - 4, as: UInt32.self))
                }
                let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == name { appeared = true }
                offset += header + length
            }
        }
    }

    /// Where libpipewire looks for the server: `PIPEWIRE_REMOTE` (default
    /// `pipewire-0`) in `PIPEWIRE_RUNTIME_DIR`, else `XDG_RUNTIME_DIR`; an
    /// absolute `PIPEWIRE_REMOTE` is its own place.
    static func socketPlace(environment: [String: String]) -> (directory: String, name: String)? {
        let remote = environment["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"
        let slash = UInt8(ascii: "/")
        if FilePaths.isAbsolute(remote) {
            let parts = remote.utf8.split(separator: slash, omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
            guard let name = parts.last, !name.isEmpty else { return nil }
            return ("/" + parts.dropLast().filter { !$0.isEmpty }.joined(separator: "/"), name)
        }
        guard let directory = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"],
            !directory.isEmpty, !remote.utf8.contains(slash)
        else { return nil }
        return (directory, remote)
    }
}
