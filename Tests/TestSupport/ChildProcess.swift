import Foundation
import SoundscapeSystem
#if canImport(Glibc)
import Glibc
#else
#error("TestSupport's process handling is written for Linux (glibc)")
#endif

/// Result of a short-lived command run with `ChildProcess.run`.
public struct ProcessResult: Sendable, CustomStringConvertible {
    public var arguments: [String]
    public var exitStatus: ChildProcess.ExitStatus
    public var stdout: String
    public var stderr: String
    public var duration: Duration

    /// Exit code, or 128 + signal number if the process was killed by a signal.
    public var status: Int32 { exitStatus.code }
    public var succeeded: Bool { exitStatus == .exited(0) }

    /// Throws a `HarnessError` including stdout/stderr unless the command exited with 0.
    @discardableResult
    public func requireSuccess() throws -> ProcessResult {
        guard succeeded else { throw HarnessError("Command failed: \(description)") }
        return self
    }

    public var description: String {
        var s = "`\(arguments.joined(separator: " "))` \(exitStatus) after \(formatSeconds(duration))"
        if !stdout.isEmpty { s += "\n  stdout: \(stdout.trimmingCharacters(in: .whitespacesAndNewlines))" }
        if !stderr.isEmpty { s += "\n  stderr: \(stderr.trimmingCharacters(in: .whitespacesAndNewlines))" }
        return s
    }
}

/// A child process made for tests, spawned with `posix_spawn`. (Not
/// `Foundation.Process`: its termination handler is delivered asynchronously
/// and was observed to stall for many seconds on a 2-CPU machine while tests
/// were blocking pool threads; here a plain thread per child does `waitpid`.)
///
/// - every child is the leader of its own process group, so
///   `signalGroup`/`killNow` reach anything it forked;
/// - all signal dispositions are reset to default and the signal mask is
///   cleared in the child (a test run from a non-interactive shell has SIGINT
///   ignored, which would otherwise be inherited);
/// - descriptors other than 0/1/2 are closed in the child;
/// - stdin is `/dev/null`, or a pipe (`stdinPipe: true`) the caller writes
///   lines into (`write(line:)`) and closes (`closeStdin()`); stdout/stderr go to a file, `/dev/null`, or are
///   captured through a pipe that a background thread drains continuously
///   (a chatty child never blocks);
/// - captured stdout can be consumed line by line with `nextLine(timeout:)`
///   (e.g. for `soundscapectl events --json`);
/// - a dedicated thread reaps the child with `waitpid`;
/// - `deinit` SIGKILLs the process group if the child is still running.
public final class ChildProcess: @unchecked Sendable {
    public enum Output: Sendable, Equatable {
        /// `/dev/null`.
        case null
        /// Inherit the test process's descriptor.
        case inherit
        /// Pipe drained into memory; read with `stdoutText`/`nextLine`.
        case capture
        /// Append to this file (created if needed). stdout and stderr may share a file.
        case file(URL)
    }

    public enum ExitStatus: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// Shell convention: the exit code, or 128 + signal.
        public var code: Int32 {
            switch self {
            case .exited(let c): return c
            case .signaled(let s): return 128 + s
            }
        }

        public var description: String {
            switch self {
            case .exited(let c): return "exited with status \(c)"
            case .signaled(let s): return "killed by signal \(s)"
            }
        }

        init(waitStatus status: Int32) {
            let low = status & 0x7f
            if low == 0 {
                self = .exited((status >> 8) & 0xff)
            } else {
                self = .signaled(low)
            }
        }
    }

    public let name: String
    public let executableURL: URL
    public let arguments: [String]
    public let pid: Int32
    public let startedAt: ContinuousClock.Instant

    private let exitState: ExitState
    private let stdoutCollector: OutputCollector?
    private let stderrCollector: OutputCollector?
    private let stdinWriter: StdinWriter?

    /// Starts `executable` (a path, or a name looked up in the `PATH` of
    /// `environment` or of the test process). stdin is `/dev/null`, or with
    /// `stdinPipe` a pipe written with `write(line:)`.
    ///
    /// - Parameters:
    ///   - environment: complete environment for the child; `nil` inherits the test process's.
    ///   - currentDirectory: working directory; `nil` inherits.
    public static func start(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        currentDirectory: URL? = nil,
        stdinPipe: Bool = false,
        stdout: Output = .capture,
        stderr: Output = .capture,
        name: String? = nil
    ) throws -> ChildProcess {
        let url = try ExternalTools.resolveExecutable(executable, environment: environment)
        return try ChildProcess(
            executableURL: url, arguments: arguments, environment: environment,
            currentDirectory: currentDirectory, stdinPipe: stdinPipe, stdout: stdout, stderr: stderr,
            name: name ?? url.lastPathComponent)
    }

    private init(
        executableURL: URL,
        arguments: [String],
        environment: [String: String]?,
        currentDirectory: URL?,
        stdinPipe: Bool,
        stdout: Output,
        stderr: Output,
        name: String
    ) throws {
        self.name = name
        self.executableURL = executableURL
        self.arguments = arguments

        var fdsToCloseAfterSpawn: [Int32] = []
        var fdsToCloseOnFailure: [Int32] = []
        var openedFiles: [String: Int32] = [:]
        defer { fdsToCloseAfterSpawn.forEach { _ = close($0) } }

        /// Returns the fd the child should get (nil = inherit) and an optional collector.
        func configure(_ output: Output) throws -> (fd: Int32?, collector: OutputCollector?) {
            switch output {
            case .inherit:
                return (nil, nil)
            case .null:
                let fd = open("/dev/null", O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { throw HarnessError("Cannot open /dev/null: \(String(cString: strerror(errno)))") }
                fdsToCloseAfterSpawn.append(fd)
                return (fd, nil)
            case .file(let url):
                if let fd = openedFiles[url.path] { return (fd, nil) }
                let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    throw HarnessError("Cannot open log file \(url.path): \(String(cString: strerror(errno)))")
                }
                openedFiles[url.path] = fd
                fdsToCloseAfterSpawn.append(fd)
                return (fd, nil)
            case .capture:
                let pipe: (read: Int32, write: Int32)
                do { pipe = try Spawn.pipe() } catch { throw HarnessError("\(error)") }
                fdsToCloseAfterSpawn.append(pipe.write)
                fdsToCloseOnFailure.append(pipe.read)
                return (pipe.write, OutputCollector(fd: pipe.read))
            }
        }

        let stdinFD: Int32
        var stdinWriter: Int32?
        if stdinPipe {
            let pipe: (read: Int32, write: Int32)
            do { pipe = try Spawn.pipe() } catch { throw HarnessError("\(error)") }
            stdinFD = pipe.read
            stdinWriter = pipe.write
            fdsToCloseOnFailure.append(pipe.write)
        } else {
            stdinFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        if stdinFD >= 0 { fdsToCloseAfterSpawn.append(stdinFD) }
        let out: (fd: Int32?, collector: OutputCollector?)
        let err: (fd: Int32?, collector: OutputCollector?)
        let pid: pid_t
        do {
            out = try configure(stdout)
            err = try configure(stderr)
            do {
                pid = try Spawn.run(
                    program: executableURL.path, arguments: [executableURL.path] + arguments,
                    environment: environment ?? ProcessInfo.processInfo.environment, searchPath: false,
                    stdio: [stdinFD >= 0 ? stdinFD : nil, out.fd, err.fd], group: 0,
                    workingDirectory: currentDirectory?.path)
            } catch {
                throw HarnessError("Failed to launch \(executableURL.path) \(arguments): \(error)")
            }
        } catch {
            fdsToCloseOnFailure.forEach { _ = close($0) }
            throw error
        }

        let exitState = ExitState()
        let collectors = [out.collector, err.collector].compactMap { $0 }
        self.exitState = exitState
        self.pid = pid
        self.startedAt = ContinuousClock.now
        self.stdoutCollector = out.collector
        self.stderrCollector = err.collector
        self.stdinWriter = stdinWriter.map(StdinWriter.init)

        let reaper = Thread {
            var status: Int32 = 0
            while true {
                let r = waitpid(pid, &status, 0)
                if r == pid {
                    exitState.markExited(ExitStatus(waitStatus: status))
                    break
                }
                if r < 0 && errno == EINTR { continue }
                // ECHILD: someone else reaped it (SIGCHLD ignored?); it is gone either way.
                exitState.markExited(.exited(-1))
                break
            }
            collectors.forEach { $0.processExited() }
        }
        reaper.name = "ChildProcess-reaper-\(name)-\(pid)"
        reaper.start()
        collectors.forEach { $0.startReading(name: "\(name)-\(pid)") }
    }

    deinit {
        stdinWriter?.close()
        if isRunning {
            _ = kill(-pid, SIGKILL)
            _ = kill(pid, SIGKILL)
            _ = exitState.wait(timeout: .seconds(2))
        }
    }

    // MARK: State

    public var isRunning: Bool { exitState.status == nil }

    /// `nil` while running.
    public var exitStatus: ExitStatus? { exitState.status }

    /// Waits for the child to exit. Returns the exit code (128 + signal if it
    /// was killed by a signal), or `nil` if it is still running at the timeout.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        exitState.wait(timeout: timeout)?.code
    }

    /// Like `waitForExit` but returns the detailed status.
    public func waitForExitStatus(timeout: Duration) -> ExitStatus? {
        exitState.wait(timeout: timeout)
    }

    // MARK: Signals

    /// Sends `sig` to the child process (no-op once it has exited).
    public func signal(_ sig: Int32) {
        guard isRunning else { return }
        _ = kill(pid, sig)
    }

    /// Sends `sig` to the child's whole process group (no-op once the leader has exited).
    public func signalGroup(_ sig: Int32) {
        guard isRunning else { return }
        if kill(-pid, sig) != 0 { _ = kill(pid, sig) }
    }

    /// SIGTERM (+SIGCONT in case it is stopped), wait `gracePeriod`, then SIGKILL
    /// the process group and wait for it to be reaped.
    @discardableResult
    public func terminate(gracePeriod: Duration = .seconds(2)) -> ExitStatus? {
        guard isRunning else { return exitStatus }
        signal(SIGTERM)
        signal(SIGCONT)
        if let status = exitState.wait(timeout: gracePeriod) {
            // The leader is gone; make sure nothing else in its group survives.
            return status
        }
        return killNow()
    }

    /// SIGKILL the process group and wait (up to 5 s) until it is reaped.
    @discardableResult
    public func killNow() -> ExitStatus? {
        signalGroup(SIGKILL)
        return exitState.wait(timeout: .seconds(5))
    }

    // MARK: Output

    /// Everything captured on stdout so far (only with `.capture`).
    public var stdoutText: String { stdoutCollector?.text ?? "" }
    /// Everything captured on stderr so far (only with `.capture`).
    public var stderrText: String { stderrCollector?.text ?? "" }

    /// Next complete line of captured stdout (without the newline), waiting up
    /// to `timeout`. Returns `nil` on timeout or once stdout is closed and
    /// fully consumed. Lines are consumed: each is returned once.
    public func nextLine(timeout: Duration) -> String? {
        stdoutCollector?.nextLine(timeout: timeout)
    }

    /// Consumes lines until one satisfies `predicate` (returned) or the
    /// timeout passes (`nil`). Skipped lines are gone.
    public func nextLine(timeout: Duration, where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return nil }
            guard let line = nextLine(timeout: remaining) else { return nil }
            if predicate(line) { return line }
        }
    }

    /// Next captured stderr line, same semantics as `nextLine`.
    public func nextStderrLine(timeout: Duration) -> String? {
        stderrCollector?.nextLine(timeout: timeout)
    }

    /// True once captured stdout reached end-of-file (or the child exited and the
    /// pipe was drained).
    public var stdoutFinished: Bool { stdoutCollector?.finished ?? true }

    /// Blocks until the capture threads have drained everything (after exit):
    /// the child's exit and the end of its pipes are separate events, so what
    /// it wrote last may still be on the way when `waitForExit` returns.
    public func waitForOutputDrained(timeout: Duration) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        for c in [stdoutCollector, stderrCollector].compactMap({ $0 }) {
            c.waitFinished(until: deadline)
        }
    }

    // MARK: Input

    /// Writes `line` and a newline to the child's stdin (started with `stdinPipe`).
    public func write(line: String) throws {
        guard let stdinWriter else { throw HarnessError("\(name) was started without a stdin pipe") }
        try stdinWriter.write(line + "\n", to: name)
    }

    /// Closes the child's stdin (started with `stdinPipe`): it reads end-of-file.
    public func closeStdin() { stdinWriter?.close() }

    // MARK: Short commands

    /// Runs a short command to completion, capturing stdout and stderr.
    /// `arguments[0]` is the executable (path or name looked up in `PATH`).
    /// Throws if it cannot be started or does not finish within `timeout`
    /// (in which case its process group is killed).
    public static func run(
        _ arguments: [String],
        environment: [String: String]? = nil,
        currentDirectory: URL? = nil,
        timeout: Duration = .seconds(10)
    ) throws -> ProcessResult {
        precondition(!arguments.isEmpty, "run() needs at least the executable")
        let child = try ChildProcess.start(
            arguments[0], Array(arguments.dropFirst()), environment: environment,
            currentDirectory: currentDirectory, stdout: .capture, stderr: .capture)
        guard let status = child.waitForExitStatus(timeout: timeout) else {
            child.killNow()
            child.waitForOutputDrained(timeout: .seconds(1))
            throw HarnessError(
                "`\(arguments.joined(separator: " "))` did not finish within \(formatSeconds(timeout)); killed it."
                    + "\n  stdout so far: \(child.stdoutText)\n  stderr so far: \(child.stderrText)")
        }
        child.waitForOutputDrained(timeout: .seconds(2))
        return ProcessResult(
            arguments: arguments, exitStatus: status, stdout: child.stdoutText,
            stderr: child.stderrText, duration: ContinuousClock.now - child.startedAt)
    }
}

/// The write end of a child's stdin pipe.
private final class StdinWriter: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    /// A write to a child that has gone must fail, not end the writer with SIGPIPE.
    private static let ignoreSIGPIPE: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    init(_ fd: Int32) {
        _ = Self.ignoreSIGPIPE
        self.fd = fd
    }

    func write(_ text: String, to name: String) throws {
        try lock.withLock {
            guard fd >= 0 else { throw HarnessError("the stdin of \(name) is closed") }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw HarnessError("writing to the stdin of \(name): \(String(cString: strerror(errno)))")
                }
                bytes = bytes.dropFirst(written)
            }
        }
    }

    func close() {
        lock.withLock {
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }
}
