import Glibc
import SoundscapeCore

/// `mkdir -p` with a mode for the directories it creates (existing ones are left alone).
public enum Directories {
    /// Returns nil on success, else what went wrong.
    public static func make(_ path: String, mode: mode_t) -> String? {
        var built = FilePaths.isAbsolute(path) ? "" : "."
        for component in path.utf8.split(separator: UInt8(ascii: "/")) {
            built += "/" + String(decoding: component, as: UTF8.self)
            if mkdir(built, mode) != 0 && errno != EEXIST {
                return String(cString: strerror(errno))
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return "not a directory" }
        return nil
    }
}
