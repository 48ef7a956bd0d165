import Glibc
import SoundscapeSystem

/// The daemon starting itself again in its own process: same pid (systemd's main pid
/// stays), same arguments and environment, and the control socket systemd passed
/// still listening, handed to the new image the way systemd hands it (at descriptor
/// 3, `LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES`), so clients queue on it meanwhile
/// and none is refused.
///
/// Run from the signer spawner's thread: a seccomp filter outlives `execve`, and only
/// that thread is without the daemon's own W^X, which the new image applies afresh
/// (with a spawner of its own made first).
public enum SelfExec {
    /// Replaces the process with `executable`; returns only if that failed (why).
    public static func exec(
        executable: String, arguments: [String], environment: [String: String], listener: Int32,
        spawner: SignerSpawner
    ) async -> String {
        do {
            return try await spawner.spawn(sandbox: .init()) {
                Self.execNow(executable: executable, arguments: arguments, environment: environment, listener: listener)
            }
        } catch {
            return "\(error)"
        }
    }

    private static func execNow(
        executable: String, arguments: [String], environment: [String: String], listener: Int32
    ) -> String {
        // A binary replaced on disk (an upgrade) shows as "PATH (deleted)" in /proc/self/exe:
        // the path is what runs now.
        let suffix = " (deleted)"
        let executable = executable.hasSuffix(suffix) ? String(executable.dropLast(suffix.count)) : executable
        // The socket at 3, inherited: a dup when it is elsewhere (dup2 clears close-on-exec).
        if listener != 3 {
            guard dup2(listener, 3) == 3 else { return "dup2: \(String(cString: strerror(errno)))" }
        } else {
            _ = fcntl(3, F_SETFD, fcntl(3, F_GETFD) & ~FD_CLOEXEC)
        }
        var environment = environment
        environment["LISTEN_PID"] = "\(getpid())"
        environment["LISTEN_FDS"] = "1"
        environment["LISTEN_FDNAMES"] = "control"
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve(executable, argv, envp)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        return "execve \(executable): \(reason)"
    }
}
