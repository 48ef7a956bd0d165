import Glibc
import SoundscapeCore

/// Whether a command's program can be run, as `posix_spawnp` will look for it:
/// a name with a slash is that file (relative to the working directory the child
/// gets), a bare name is searched in `PATH` (the daemon's own: `posix_spawnp`
/// searches the caller's). Checked when the settings are read, so a program that
/// is not installed, or a script without its executable bit, is refused with its
/// line instead of failing at every start.
public enum ProgramLookup {
    /// glibc's search path when `PATH` is unset (`confstr(_CS_PATH)`).
    static let defaultPath = "/bin:/usr/bin"

    /// What is wrong with `program` (nil: it can be run).
    public static func problem(_ program: String, workingDirectory: String?, path: String?) -> String? {
        if program.utf8.contains(UInt8(ascii: "/")) {
            var file = program
            if !FilePaths.isAbsolute(program), let workingDirectory { file = FilePaths.join(workingDirectory, program) }
            return problem(file: file).map { "cannot run '\(program)': \($0)" }
        }
        let directories = SeparatedText.pieces(path ?? defaultPath, at: ":").map { $0.isEmpty ? "." : String($0) }
        var found: String?
        for directory in directories {
            let file = FilePaths.join(directory, program)
            guard FileSystem.exists(file) else { continue }
            if problem(file: file) == nil { return nil }
            found = found ?? file
        }
        if let found, let reason = problem(file: found) { return "cannot run '\(program)' (\(found)): \(reason)" }
        return "cannot run '\(program)': not found in PATH (\(path ?? defaultPath))"
    }

    /// Why `file` cannot be executed (nil: it can).
    private static func problem(file: String) -> String? {
        var info = stat()
        guard stat(file, &info) == 0 else { return String(cString: strerror(errno)).lowercasedFirst }
        guard info.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
        guard access(file, X_OK) == 0 else { return "it is not executable (chmod +x it)" }
        return nil
    }
}

extension String {
    /// `No such file or directory` → `no such file or directory`, for a clause.
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
