import Glibc
import SoundscapeCore
import SoundscapeSystem

/// How `soundscapectl import` and `remove` share the user's soundscape folder with each
/// other and with the daemon: one change at a time (`Lock`, an exclusive `flock` on the
/// folder), and the output written under a temporary name (`temporaryName`) that the
/// catalog never lists (it is not `*.opus`) and is renamed into place when whole.
///
/// While its import runs, a temporary file is `flock`ed by the importer (and, through the
/// descriptor it inherits, by the decoding child): a temporary file nobody holds is what
/// a crashed or killed import left, whatever its process id says (the daemon may run in
/// another PID namespace). `removeLeftovers` deletes those; the next import, removal or
/// daemon start calls it.
public enum ImportFolder {
    static let prefix = ".import-"
    static let suffix = ".tmp"

    /// `.import-PID-TAG.tmp`: unique per process and tag (a hash of the id, or "manifest").
    public static func temporaryName(tag: String) -> String {
        "\(prefix)\(getpid())-\(tag)\(suffix)"
    }

    public static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(prefix) && name.hasSuffix(suffix)
    }

    /// Deletes the temporary files in `folder` that no running import holds; returns
    /// their names. Call it holding the folder's `Lock` (an import that has just
    /// created its file but not yet locked it holds the folder's lock till it has).
    @discardableResult
    public static func removeLeftovers(in folder: String) -> [String] {
        var removed: [String] = []
        for name in FileSystem.entries(of: folder) ?? [] where isTemporary(name) {
            let path = FilePaths.join(folder, name)
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            if descriptor >= 0 {
                let held = flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
                close(descriptor)
                if held { continue }
            }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }

    /// Takes the folder's lock and removes what crashed imports left: the daemon's start.
    /// Nil when the folder does not exist; else the names removed.
    @discardableResult
    public static func cleanUp(_ folder: String) -> [String]? {
        guard let lock = try? Lock(folder) else { return nil }
        defer { lock.release() }
        return removeLeftovers(in: folder)
    }

    /// Holds the temporary file `descriptor` for its import (see the type's description).
    public static func hold(_ descriptor: Int32) {
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    }

    /// An exclusive `flock` on the folder: one import, removal or clean-up changes it at a time.
    public final class Lock {
        private var descriptor: Int32

        /// Why the folder could not be opened: its `errno`.
        public struct Failure: Error {
            public let code: Int32
        }

        public init(_ folder: String) throws(Failure) {
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Failure(code: errno) }
            self.descriptor = descriptor
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        }

        public func release() {
            guard descriptor >= 0 else { return }
            close(descriptor)
            descriptor = -1
        }

        deinit { release() }
    }
}
