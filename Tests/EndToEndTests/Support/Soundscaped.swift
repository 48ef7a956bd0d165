import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real daemon running in a private graph, with its own socket and state
/// directory, plus the real CLI to talk to it.
final class Soundscaped: @unchecked Sendable {
    let graph: PipeWireGraph
    let socket: String
    let stateDirectory: URL
    let userSoundscapes: URL
    private(set) var process: ChildProcess?
    private var extraArguments: [String]

    init(graph: PipeWireGraph, arguments: [String] = []) throws {
        self.graph = graph
        socket = graph.directory.appendingPathComponent("soundscaped-test/control.sock").path
        stateDirectory = graph.directory.appendingPathComponent("state")
        userSoundscapes = URL(
            fileURLWithPath: graph.environment["XDG_DATA_HOME"]
                ?? graph.directory.appendingPathComponent("data").path
        )
        .appendingPathComponent("soundscaped/soundscapes")
        try FileManager.default.createDirectory(at: userSoundscapes, withIntermediateDirectories: true)
        extraArguments = arguments
    }

    /// Starts the daemon and waits until its socket answers. With a `launcher`
    /// (a command that ends by exec'ing its arguments, such as an `unshare`
    /// wrapper), the daemon is started through it, as the same process.
    @discardableResult
    func start(arguments: [String]? = nil, launcher: [String] = [], environment: [String: String] = [:]) throws -> ChildProcess {
        if let arguments { extraArguments = arguments }
        let daemon =
            [
                try ProductLocator.soundscaped().path,
                "--socket", socket, "--state-dir", stateDirectory.path, "--log-level", "debug",
            ] + extraArguments
        let command = launcher + daemon
        let child = try graph.spawn(
            command[0], Array(command.dropFirst()), name: "soundscaped",
            extraEnvironment: environment)
        process = child
        try waitUntil(timeout: .seconds(10), "soundscaped to answer on its socket\n\(graph.logTail(lines: 30))") {
            guard child.isRunning else {
                throw HarnessError("soundscaped exited: \(String(describing: child.exitStatus))\n\(graph.logTail(lines: 30))")
            }
            return (try? ctl("status"))?.succeeded == true
        }
        return child
    }

    /// SIGTERM (a clean stop) or SIGKILL (a crash); returns how it exited.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) throws -> ChildProcess.ExitStatus {
        guard let process else { throw HarnessError("soundscaped is not running") }
        process.signal(signal)
        guard let status = process.waitForExitStatus(timeout: timeout) else {
            throw HarnessError("soundscaped did not exit within \(timeout) after signal \(signal)\n\(graph.logTail(lines: 30))")
        }
        self.process = nil
        return status
    }

    /// Every thread's stack, for a failure message: where the daemon was when
    /// it did not do what a test waited for (a loop thread blocked, or idle and
    /// never told). gdb attaches for a moment and detaches (the toolchain's
    /// lldb wants a libpython Debian 12 lacks); what stands in the way is said
    /// instead.
    func threadStacks() -> String {
        guard let pid = process?.pid else { return "(soundscaped is not running)" }
        guard let gdb = ExternalTools.path(of: "gdb") else {
            return "(no gdb on PATH for the stacks: install the apt package \(ExternalTools.aptPackages["gdb"] ?? "gdb"))"
        }
        do {
            let result = try ChildProcess.run(
                [gdb, "--batch", "--nx", "-p", String(pid), "-ex", "thread apply all backtrace 16"],
                timeout: .seconds(60))
            return result.succeeded ? result.stdout : "(gdb failed: \(result))"
        } catch {
            return "(gdb: \(error))"
        }
    }

    /// Runs `soundscapectl` against this daemon.
    func ctl(_ arguments: String..., timeout: Duration = .seconds(15)) throws -> ProcessResult {
        try graph.run([try ProductLocator.soundscapectl().path] + arguments + ["--socket", socket], timeout: timeout)
    }

    /// Like `ctl`, but the command must succeed.
    @discardableResult
    func must(_ arguments: String...) throws -> ProcessResult {
        let result = try graph.run(
            [try ProductLocator.soundscapectl().path] + arguments + ["--socket", socket],
            timeout: .seconds(15))
        guard result.succeeded else {
            throw HarnessError("soundscapectl \(arguments.joined(separator: " ")) failed: \(result)\n\(graph.logTail(lines: 30))")
        }
        return result
    }

    /// The status as `status --json` prints it.
    func status() throws -> [String: Any] {
        let result = try must("status", "--json")
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw HarnessError("status --json printed no object: \(result.stdout)")
        }
        return object
    }

    /// Follows `soundscapectl events --json` until stopped.
    func followEvents() throws -> EventFollower {
        let child = try graph.spawn(
            try ProductLocator.soundscapectl().path, ["events", "--json", "--socket", socket],
            name: "events", stdout: .capture)
        let follower = EventFollower(process: child)
        // The first line is the snapshot: once it is here, the subscription is live.
        _ = try follower.next(timeout: .seconds(5)) { $0["reason"] as? String == "snapshot" }
        return follower
    }
}

/// Reads JSON events line by line from a `soundscapectl events --json` child.
final class EventFollower: @unchecked Sendable {
    let process: ChildProcess
    private(set) var seen: [[String: Any]] = []

    init(process: ChildProcess) {
        self.process = process
    }

    /// The next event matching `predicate`, skipping (but recording) others.
    @discardableResult
    func next(
        timeout: Duration = .seconds(10), _ what: String = "an event",
        where predicate: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let line = process.nextLine(timeout: deadline - ContinuousClock.now) else { break }
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw HarnessError("events --json printed a line that is not a JSON object: \(line)")
            }
            seen.append(event)
            if predicate(event) { return event }
        }
        throw HarnessError("timed out after \(timeout) waiting for \(what); seen: \(seen.map { $0["reason"] ?? "?" })")
    }

    /// The next event with this reason.
    @discardableResult
    func next(reason: String, timeout: Duration = .seconds(10)) throws -> [String: Any] {
        try next(timeout: timeout, "a '\(reason)' event") { $0["reason"] as? String == reason }
    }

    func stop() {
        _ = process.terminate()
    }
}
