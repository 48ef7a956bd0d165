import CSoundscapeSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore

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
    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

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
        guard let program = command.first else { throw SpawnError(description: "the signer command is empty") }
        let stdin = try Pipe.make()
        let stdout = try Pipe.make()
        let stderr = try Pipe.make()
        var closeOnFailure = [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write]
        defer { closeOnFailure.forEach { close($0) } }

        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let watcher = try Spawn.run(
            program: "/bin/sh", arguments: ["/bin/sh", "-c", watcherScript], environment: ["PATH": "/usr/bin:/bin"],
            searchPath: false, stdin: lifeline, stdout: devNull, stderr: devNull, group: 0, workingDirectory: nil)
        let signer: pid_t
        do {
            signer = try Spawn.run(
                program: program, arguments: command, environment: environment, searchPath: true,
                stdin: stdin.read, stdout: stdout.write, stderr: stderr.write, group: watcher,
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

/// `pipe2` with close-on-exec on both ends: only what `posix_spawn` dup2's reaches a child.
private enum Pipe {
    static func make() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard scs_pipe2_cloexec(&fds) == 0 else {
            throw SignerProcess.SpawnError(description: "pipe2: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }
}

/// A thin, careful `posix_spawn(p)`.
enum Spawn {
    /// `group` 0 makes a new process group led by the child; another pid joins that group.
    static func run(program: String, arguments: [String], environment: [String: String], searchPath: Bool,
                    stdin: Int32, stdout: Int32, stderr: Int32, group: pid_t,
                    workingDirectory: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // Nothing else of ours leaks into the child, whatever a library forgot to mark close-on-exec.
        scs_spawn_addclosefrom(&actions, 3)
        if let workingDirectory { scs_spawn_addchdir(&actions, workingDirectory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Default dispositions and an empty mask: our own signal handling must not leak into the child
        // (an inherited "ignore SIGTERM" would make it unstoppable).
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, group)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = searchPath
            ? posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
            : posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw SignerProcess.SpawnError(description: "cannot run '\(program)': \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// Reaps one child on a thread blocked in `waitpid`: no signal handler, no polling.
enum Reaper {
    static func exit(of pid: pid_t) async -> ExitReason {
        await withCheckedContinuation { continuation in
            BlockingThread.start { continuation.resume(returning: wait(for: pid)) }
        }
    }

    static func wait(for pid: pid_t) -> ExitReason {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(code: -1) }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        return signal == 0 ? .exited(code: (status >> 8) & 0xff) : .signaled(signal)
    }
}
