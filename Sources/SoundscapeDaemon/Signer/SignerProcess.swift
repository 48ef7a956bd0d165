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
///   process group — the signer and anything it started. It ignores every
///   signal `signer-stop-signal` may name, so that a polite stop of the group
///   (whichever signal asks) does not cut the lifeline;
/// - the signer itself, joining the watcher's group.
/// Both are reaped by threads that block in `waitpid`, so there are no zombies
/// and no polling.
final class SignerProcess: @unchecked Sendable {
    /// The signer's pid (what status shows).
    let pid: pid_t
    /// The process group: the watcher's pid.
    let group: pid_t
    /// Our end of the signer's stdin (with `signer-stdin = events` only), and of its stdout and stderr.
    let stdinWrite: Int32?
    let stdoutRead: Int32
    let stderrRead: Int32
    private let exit: Task<ExitReason, Never>

    /// The watcher script: wait for the lifeline to break, then take the group down.
    /// The watcher script: wait for the lifeline to break, then take the group down. It
    /// ignores every stop signal (`SignerStopSignal`), whichever is configured now or later.
    static let watcherScript = "trap '' \(SignerStopSignal.allCases.map { $0.rawValue.dropFirst(3) }.joined(separator: " ")); read -r _; kill -9 0"

    static func spawn(
        command: [String], environment: [String: String], workingDirectory: String?,
        stdin stdinMode: SignerStdin, lifeline: Int32
    ) throws -> SignerProcess {
        guard let program = command.first else { throw SpawnError("the signer command is empty") }
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        // What the signer reads: our pipe of events, /dev/null, or the file itself (its bytes, then end of file).
        var stdinPipe: (read: Int32, write: Int32)?
        let stdinRead: Int32
        var closeOnFailure: [Int32] = []
        defer { closeOnFailure.forEach { close($0) } }
        switch stdinMode {
        case .events:
            let pipe = try Spawn.pipe()
            stdinPipe = pipe
            stdinRead = pipe.read
            closeOnFailure += [pipe.read, pipe.write]
        case .null:
            stdinRead = devNull
        case .file(let path):
            do {
                stdinRead = try StdinFile.open(path)
            } catch {
                throw SpawnError("\(Settings.signerStdin.key) file:\(path): \(error)")
            }
            closeOnFailure.append(stdinRead)
        }
        let stdout = try Spawn.pipe()
        closeOnFailure += [stdout.read, stdout.write]
        let stderr = try Spawn.pipe()
        closeOnFailure += [stderr.read, stderr.write]

        let watcher = try Spawn.run(
            program: "/bin/sh", arguments: ["/bin/sh", "-c", watcherScript], environment: ["PATH": "/usr/bin:/bin"],
            searchPath: false, stdio: [lifeline, devNull, devNull], group: 0)
        let signer: pid_t
        do {
            signer = try Spawn.run(
                program: program, arguments: command, environment: environment, searchPath: true,
                stdio: [stdinRead, stdout.write, stderr.write], group: watcher,
                workingDirectory: workingDirectory)
        } catch {
            kill(-watcher, SIGKILL)
            _ = Reaper.wait(for: watcher)
            throw error
        }
        if stdinRead != devNull { close(stdinRead) }
        close(stdout.write)
        close(stderr.write)
        closeOnFailure = []
        return SignerProcess(
            pid: signer, group: watcher, stdinWrite: stdinPipe?.write, stdoutRead: stdout.read,
            stderrRead: stderr.read)
    }

    private init(pid: pid_t, group: pid_t, stdinWrite: Int32?, stdoutRead: Int32, stderrRead: Int32) {
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

    /// Signals the whole group (the watcher ignores the stop signals, not SIGKILL).
    /// A stop signal is followed by SIGCONT, as systemd follows its KillSignal=: a
    /// signer that was stopped (SIGSTOP, a debugger, a frozen cgroup) would hold the
    /// signal pending until SIGKILL instead of shutting down cleanly.
    func signal(_ signal: Int32) {
        kill(-group, signal)
        if signal != SIGKILL && signal != SIGCONT { kill(-group, SIGCONT) }
    }

    /// How the signer ended, once it and the rest of its group are gone.
    var exitReason: ExitReason {
        get async { await exit.value }
    }
}
