import CSoundscapeSystem
import Glibc
import SoundscapeCore

/// Why a process could not be started.
public struct SpawnError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// A thin, careful `posix_spawn(p)`, shared by the daemon (the signer host) and
/// the tests (every child they start), so both start children the same way:
/// no code runs between fork and exec in a multi-threaded process, and nothing
/// of the parent leaks into the child.
public enum Spawn {
    /// Starts `program` with `arguments` (argv, `arguments[0]` included).
    ///
    /// - `stdio`: what becomes descriptors 0, 1 and 2 (nil leaves that one closed-on-exec
    ///   or inherited as the parent has it). Every other descriptor is closed in the child,
    ///   whatever a library forgot to mark close-on-exec.
    /// - `group`: 0 makes the child the leader of a new process group; another pid
    ///   joins that group.
    /// - Signal dispositions are reset to default and the mask is emptied: the
    ///   parent's own signal handling (a blocked SIGTERM, an ignored SIGINT) must not
    ///   make the child unstoppable.
    public static func run(
        program: String, arguments: [String], environment: [String: String],
        searchPath: Bool, stdio: [Int32?], group: pid_t = 0,
        workingDirectory: String? = nil
    ) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, descriptor) in stdio.prefix(3).enumerated() {
            if let descriptor { posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target)) }
        }
        scs_spawn_addclosefrom(&actions, 3)
        if let workingDirectory {
            let result = scs_spawn_addchdir(&actions, workingDirectory)
            guard result == 0 else { throw SpawnError("cannot change to \(workingDirectory): \(errorText(result))") }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
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
        let result =
            searchPath
            ? posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
            : posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError("cannot run '\(program)': \(errorText(result))") }
        return pid
    }

    /// `pipe2` with close-on-exec on both ends, set atomically, so a spawn on
    /// another thread cannot inherit it: only what `run` dup2's reaches a child.
    public static func pipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard scs_pipe2_cloexec(&fds) == 0 else { throw SpawnError("pipe2: \(errorText(errno))") }
        return (fds[0], fds[1])
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// Reaps one child on a thread blocked in `waitpid`: no signal handler, no polling.
public enum Reaper {
    public static func exit(of pid: pid_t) async -> ExitReason {
        await withCheckedContinuation { continuation in
            BlockingThread.start { continuation.resume(returning: wait(for: pid)) }
        }
    }

    /// Blocks until `pid` has exited; `.exited(code: -1)` if it is not our child.
    public static func wait(for pid: pid_t) -> ExitReason {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(code: -1) }
        }
        return ExitReason(waitStatus: status)
    }
}

extension ExitReason {
    /// From a `waitpid` status (WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import).
    public init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited(code: (status >> 8) & 0xff) : .signaled(signal)
    }
}
