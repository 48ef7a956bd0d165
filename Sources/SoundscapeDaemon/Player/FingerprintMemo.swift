import Glibc
import SoundscapeAudio
import SoundscapeCore
import SoundscapeSystem
import Synchronization

/// The fingerprints of the soundscape files opened before, by file identity,
/// so that opening one again does not read and hash the whole file.
///
/// A fingerprint (FNV-1a of the compressed bytes) names a soundscape's decoded
/// loop in the PCM cache. Hashing it at every open put a read of the whole file
/// on the way to sound at each start: about a millisecond of CPU for a built-in
/// loop, tens for a long recording, after a crash too, when a restarted daemon
/// should be heard again at once. The memo lives beside the decoded loops
/// (`<cache dir>/fingerprints`, one line a file), so it goes where they go.
///
/// An entry is trusted only for the same file unchanged: device, inode, size,
/// and the modification and status-change times to the nanosecond. An edit
/// changes the status-change time, which no program can set back. And, like
/// git's index, an entry is trusted only if the file had not changed for
/// `settled` before it was hashed: on a file system with coarse timestamps an
/// edit right after the hash could otherwise keep every field the same.
/// Anything else (no entry, a damaged memo, a file too fresh) hashes the file,
/// as before, and records it.
///
/// With the same trust, and in memory only (what this run validated itself), the
/// memo keeps the loop's length in frames: a file opened again unchanged is not
/// validated again either. Walking its pages and parsing its Opus headers cost
/// about 0.3 ms a file, on the way to every Play's answer, once per layer of a mix.
final class FingerprintMemo: Sendable {
    /// What of `stat` must stay the same.
    struct Identity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        init(device: UInt64, inode: UInt64, size: Int64, modified: timespec, changed: timespec) {
            (self.device, self.inode, self.size, self.modified, self.changed) = (device, inode, size, modified, changed)
        }

        init(_ info: stat) {
            self.init(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                modified: info.st_mtim, changed: info.st_ctim)
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    private struct Entry: Sendable {
        var path: String
        var identity: Identity
        /// CLOCK_REALTIME seconds when the file was hashed.
        var hashedAt: Int
        var fingerprint: UInt64
        /// The loop's length, as this run validated the file (never written).
        var frames: Int64?
    }

    /// How long a file must have been unchanged when it was hashed for its entry to count.
    static let settled = 2
    /// Entries kept: the most recently hashed (a user switches among a handful of soundscapes).
    static let capacity = 32

    let file: String
    /// The memo as last read or written (the daemon is its only writer).
    private let entries = Mutex<[Entry]?>(nil)

    init(directory: String) {
        file = FilePaths.join(directory, "fingerprints")
    }

    /// The remembered fingerprint of the file at `path`, as `info` describes it now.
    func fingerprint(of path: String, _ info: stat) -> UInt64? {
        known(of: path, info)?.fingerprint
    }

    /// What is remembered of the file at `path`, as `info` describes it now: its
    /// fingerprint, and its frames if this run validated it so.
    func known(of path: String, _ info: stat) -> SoundscapeData.Known? {
        let identity = Identity(info)
        return load().first { $0.path == path }.flatMap { entry in
            entry.identity == identity && identity.changed.tv_sec + Self.settled <= entry.hashedAt
                ? SoundscapeData.Known(fingerprint: entry.fingerprint, frames: entry.frames) : nil
        }
    }

    /// Records the fingerprint just computed for the file at `path`. A memo that
    /// cannot be written only means the next start hashes again.
    func remember(_ fingerprint: UInt64, of path: String, _ info: stat) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var all = load().filter { $0.path != path }
        all.insert(Entry(path: path, identity: Identity(info), hashedAt: now.tv_sec, fingerprint: fingerprint), at: 0)
        all = Array(all.prefix(Self.capacity))
        entries.withLock { $0 = all }
        save(all)
    }

    /// Records that the file at `path`, as `info` describes it, with the remembered
    /// fingerprint, was validated whole: `frames` long (in memory; nothing is written).
    func rememberValidated(_ frames: Int64, fingerprint: UInt64, of path: String, _ info: stat) {
        let identity = Identity(info)
        entries.withLock { entries in
            guard let index = entries?.firstIndex(where: { $0.path == path }),
                entries?[index].identity == identity, entries?[index].fingerprint == fingerprint
            else { return }
            entries?[index].frames = frames
        }
    }

    private func load() -> [Entry] {
        if let known = entries.withLock({ $0 }) { return known }
        let read = (FileSystem.text(of: file) ?? "").split(separator: "\n").compactMap(Self.parse)
        entries.withLock { $0 = read }
        return read
    }

    // One line a file: device inode size mtime(s.ns) ctime(s.ns) hashed-at fingerprint(hex) path.
    private static func parse(_ line: Substring) -> Entry? {
        let fields = line.split(separator: " ", maxSplits: 7)
        func time(_ text: Substring) -> timespec? {
            let parts = text.split(separator: ".")
            guard parts.count == 2, let seconds = Int(parts[0]), let nanoseconds = Int(parts[1]) else { return nil }
            return timespec(tv_sec: seconds, tv_nsec: nanoseconds)
        }
        guard fields.count == 8, let device = UInt64(fields[0]), let inode = UInt64(fields[1]),
            let size = Int64(fields[2]), let modified = time(fields[3]), let changed = time(fields[4]),
            let hashedAt = Int(fields[5]), let fingerprint = UInt64(fields[6], radix: 16), FilePaths.isAbsolute(fields[7])
        else { return nil }
        let identity = Identity(device: device, inode: inode, size: size, modified: modified, changed: changed)
        return Entry(path: String(fields[7]), identity: identity, hashedAt: hashedAt, fingerprint: fingerprint)
    }

    /// Written whole to a temporary file and renamed over the memo, so a crash
    /// mid-write leaves the old memo or the new one, never half of one.
    private func save(_ all: [Entry]) {
        func time(_ t: timespec) -> String { "\(t.tv_sec).\(t.tv_nsec)" }
        let text = all.filter { !$0.path.contains("\n") }.map { entry in
            let i = entry.identity
            return "\(i.device) \(i.inode) \(i.size) \(time(i.modified)) \(time(i.changed)) \(entry.hashedAt) "
                + "\(String(entry.fingerprint, radix: 16)) \(entry.path)\n"
        }.joined()
        guard Directories.make(FilePaths.parent(file), mode: 0o700) == nil else { return }
        let temporary = "\(file).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let written = Array(text.utf8).withUnsafeBytes { FileSystem.writeAll(descriptor, $0) }
        guard close(descriptor) == 0, written, rename(temporary, file) == 0 else {
            unlink(temporary)
            return
        }
    }
}
