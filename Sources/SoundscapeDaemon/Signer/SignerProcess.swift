import Glibc
import SoundscapeCore
import SoundscapeSystem

/// One running instance of the signer host, in a process group of its own.
///
/// Started with `posix_spawn` (no code runs between fork and exec in our
/// multi-threaded process) as two processes in one new group:
/// - a *lifeline watcher*, `/bin/sh` blocked reading a pipe whose only write
///   end the daemon holds. If the daemon dies, even by SIGKILL, the kernel
///   closes that end, the read returns, and the watcher kills its whole
///   process group — the signer and anything it started. It ignores SIGTERM so
///   that a polite stop of the group does not cut the lifeline;
/// - the signer itself, joining the watcher's group.
/// Both are reaped by threads that block in `waitpid`, so there are no zombies
/// and no polling.
final class SignerProcess: @unchecked Sendable {
    /// The signer's pid (what status shows).
    let pid: pid_t
    /// The process group: the watcher's pid.
    let group: pid_t
    /// Our end of the signer's stdin, and of its stdout and stderr.
    let stdinWrite: Int32
    let stdoutRead: Int32
    let stderrRead: Int32
    private let exit: Task<ExitReason, Never>

    /// The watcher script: wait for the lifeline to break, then take the group down.
    private static let watcherScript = "trap '' TERM INT HUP; read -r _; kill -9 0"

    static func spawn(command: [String], environment: [String: String], workingDirectory: String?,
                      lifeline: Int32) throws -> SignerProcess {
        guard let program = command.first else { throw SpawnError("the signer command is empty") }
        let stdin = try Spawn.pipe()
        let stdout = try Spawn.pipe()
        let stderr = try Spawn.pipe()
        var closeOnFailure = [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write]
        defer { closeOnFailure.forEach { close($0) } }

        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let watcher = try Spawn.run(
            program: "/bin/sh", arguments: ["/bin/sh", "-c", watcherScript], environment: ["PATH": "/usr/bin:/bin"],
            searchPath: false, stdio: [lifeline, devNull, devNull], group: 0)
        let signer: pid_t
        do {
            signer = try Spawn.run(
                program: program, arguments: command, environment: environment, searchPath: true,
                stdio: [stdin.read, stdout.write, stderr.write], group: watcher,
                workingDirectory: workingDirectory)
        } catch {
            kill(-watcher, SIGKILL)
            _ = Reaper.wait(for: watcher)
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        closeOnFailure = []
        return SignerProcess(pid: signer, group: watcher, stdinWrite: stdin.write, stdoutRead: stdout.read,
                             stderrRead: stderr.read)
    }

    private init(pid: pid_t, group: pid_t, stdinWrite: Int32, stdoutRead: Int32, stderrRead: Int32) {
        self.pid = pid
        self.group = group
        self.stdinWrite = stdinWrite
        self.stdoutRead = stdoutRead
        self.stderrRead = stderrRead
        exit = Task.detached {
            let reason = await Reaper.exit(of: pid)
            // Whatever the signer left behind in its group (and the watcher) goes with it.
            kill(-group, SIGKILL)
            _ = await Reaper.exit(of: group)
            return reason
        }
    }

    /// Signals the whole group (the watcher ignores SIGTERM, not SIGKILL).
    func signal(_ signal: Int32) {
        kill(-group, signal)
    }

    /// How the signer ended, once it and the rest of its group are gone.
    var exitReason: ExitReason {
        get async { await exit.value }
    }
}
