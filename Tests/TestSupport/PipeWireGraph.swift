import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private, headless PipeWire graph for end-to-end tests:
/// its own dbus-daemon, pipewire and wireplumber, in a fresh temp directory
/// that serves as `XDG_RUNTIME_DIR` (sockets), holds the logs (`logs/`), the
/// isolated XDG config/state/data/cache homes and recordings.
///
/// ```swift
/// let graph = PipeWireGraph()
/// try graph.start()
/// defer { graph.stop() }
/// try graph.createNullSink(name: "speaker")
/// let daemon = try graph.spawn(ProductLocator.soundscaped().path)   // joins this graph
/// ```
///
/// Cleanup is layered so that no daemon outlives the test:
/// 1. `stop()` (also called from `deinit`) terminates everything, SIGKILLs
///    stragglers and their process groups, then kills every process whose
///    environment carries this graph's marker (`SOUNDSCAPE_TEST_GRAPH=<dir>`),
///    which includes anything a test started with `environment`.
/// 2. A watchdog shell process polls the test process; if the test process
///    dies without calling `stop()` (crash, SIGKILL), it kills every marked
///    process and removes the directory.
/// 3. On the first `start()` in a test process, marked processes whose owner
///    test process is gone are killed.
///
/// Keep the graph referenced for the whole test (`defer { graph.stop() }` or
/// `withGraph` do that): Swift may release an object after its last use, and
/// `deinit` stops the graph.
///
/// WirePlumber's ALSA/BlueZ/V4L2/libcamera monitors are disabled (through an
/// `XDG_CONFIG_HOME` override holding `scripts/no-hardware`: Lua files for
/// WirePlumber 0.4, a `wireplumber.conf.d` fragment for 0.5) so the graph never
/// touches real hardware; `start()`, the restarts and `withGraph` fail if the
/// graph has a device all the same (`requireNoDevices`).
///
/// All methods block; they are safe to call from any thread.
public final class PipeWireGraph: @unchecked Sendable {
    public enum Daemon: String, Sendable, CaseIterable {
        case dbus = "dbus-daemon"
        case pipewire
        case wireplumber
    }

    /// Set `SOUNDSCAPE_KEEP_TEST_DIRS=1` to keep the directories (logs,
    /// recordings) of failed graphs by default.
    public static let keepDirectoriesVariable = "SOUNDSCAPE_KEEP_TEST_DIRS"

    public let startupTimeout: Duration
    public let isolateHardware: Bool
    /// WirePlumber's configuration that keeps it away from hardware (`scripts/no-hardware/wireplumber`).
    public let noHardwareConfiguration: URL
    public let extraPipeWireConfig: String?

    // The graph's state, read and written under `lock` only; not private, as the graph's
    // other files (+Lifecycle, +Nodes, +Recording) use it too.
    let lock = NSLock()
    var _directory: URL?
    var _keepOnFailure: Bool
    var failed = false
    var stopped = false
    var daemons: [Daemon: ChildProcess] = [:]
    var children: [ChildProcess] = []
    var everStarted: [ChildProcess] = []
    var watchdog: ChildProcess?
    private var usedNames: Set<String> = []

    /// - Parameters:
    ///   - keepOnFailure: keep the temp directory when the graph was marked failed
    ///     (`markFailed()`, a throwing `withGraph` body, or a failed `start()`).
    ///   - startupTimeout: bound for each daemon to become ready.
    ///   - isolateHardware: disable WirePlumber's hardware monitors, and fail if the graph has a device.
    ///   - noHardwareConfiguration: the configuration that does so (default: the checkout's
    ///     `scripts/no-hardware/wireplumber`, `PipeWireGraph.checkoutNoHardwareConfiguration`).
    ///   - extraPipeWireConfig: written to `pipewire.conf.d/90-test.conf` in the
    ///     graph's `XDG_CONFIG_HOME` (e.g. `context.properties = { default.clock.quantum = 256 }`).
    public init(
        keepOnFailure: Bool = ProcessInfo.processInfo.environment[PipeWireGraph.keepDirectoriesVariable] == "1",
        startupTimeout: Duration = .seconds(10),
        isolateHardware: Bool = true,
        noHardwareConfiguration: URL = PipeWireGraph.checkoutNoHardwareConfiguration,
        extraPipeWireConfig: String? = nil
    ) {
        self._keepOnFailure = keepOnFailure
        self.startupTimeout = startupTimeout
        self.isolateHardware = isolateHardware
        self.noHardwareConfiguration = noHardwareConfiguration
        self.extraPipeWireConfig = extraPipeWireConfig
    }

    deinit {
        stop()
    }

    /// Creates and starts a graph (`keepOnFailure: nil` = the environment default).
    public static func started(
        keepOnFailure: Bool? = nil,
        startupTimeout: Duration = .seconds(10),
        extraPipeWireConfig: String? = nil
    ) throws -> PipeWireGraph {
        let graph = PipeWireGraph(startupTimeout: startupTimeout, extraPipeWireConfig: extraPipeWireConfig)
        if let keepOnFailure { graph.keepOnFailure = keepOnFailure }
        try graph.start()
        return graph
    }

    /// Starts a graph, runs `body`, always stops the graph. If `body` throws,
    /// or the graph has a device once it returns, the graph is marked failed and
    /// the daemon log tails are printed to stderr.
    public static func withGraph<T>(
        keepOnFailure: Bool? = nil, extraPipeWireConfig: String? = nil, _ body: (PipeWireGraph) throws -> T
    ) throws -> T {
        let graph = try started(keepOnFailure: keepOnFailure, extraPipeWireConfig: extraPipeWireConfig)
        defer { graph.stop() }
        do {
            let result = try body(graph)
            try graph.checkIsolation()
            return result
        } catch {
            graph.reportFailure(error)
            throw error
        }
    }

    /// Async flavour of `withGraph`.
    public static func withGraph<T>(
        keepOnFailure: Bool? = nil, extraPipeWireConfig: String? = nil, _ body: (PipeWireGraph) async throws -> T
    ) async throws -> T {
        let graph = try started(keepOnFailure: keepOnFailure, extraPipeWireConfig: extraPipeWireConfig)
        defer { graph.stop() }
        do {
            let result = try await body(graph)
            try graph.checkIsolation()
            return result
        } catch {
            graph.reportFailure(error)
            throw error
        }
    }

    private func reportFailure(_ error: Error) {
        markFailed()
        let description = String(String(describing: error).prefix(500))
        let text = "PipeWireGraph (\(directory.path)): body threw \(description)\n\(logTail(lines: 20))"
        FileHandle.standardError.write(Data(text.utf8))
    }

    // MARK: - Paths and environment

    /// The graph's temp directory (= `XDG_RUNTIME_DIR`). Stays valid as a path after `stop()`.
    public var directory: URL {
        guard let dir = lock.withLock({ _directory }) else {
            preconditionFailure("PipeWireGraph.start() has not been called")
        }
        return dir
    }

    public var logDirectory: URL { directory.appendingPathComponent("logs", isDirectory: true) }

    public var recordingsDirectory: URL { directory.appendingPathComponent("recordings", isDirectory: true) }

    public var keepOnFailure: Bool {
        get { lock.withLock { _keepOnFailure } }
        set { lock.withLock { _keepOnFailure = newValue } }
    }

    /// Marks the graph as failed: with `keepOnFailure`, `stop()` (and the
    /// watchdog) keep the directory.
    public func markFailed() {
        let (dir, keep) = lock.withLock { () -> (URL?, Bool) in
            failed = true
            return (_directory, _keepOnFailure)
        }
        if keep, let dir {
            _ = FileManager.default.createFile(atPath: dir.appendingPathComponent(".keep").path, contents: nil)
        }
    }

    /// The complete environment a child needs to join this graph: PATH,
    /// XDG_RUNTIME_DIR = PIPEWIRE_RUNTIME_DIR = the graph dir, the graph's
    /// DBUS_SESSION_BUS_ADDRESS, isolated HOME / XDG_{CONFIG,STATE,DATA,CACHE}_HOME
    /// under the graph dir, LANG=C.UTF-8, the cleanup markers, and (if set)
    /// LLVM_PROFILE_FILE / SWIFT_BACKTRACE / TMPDIR / PIPEWIRE_DEBUG / WIREPLUMBER_DEBUG
    /// passed through.
    /// Nothing else is inherited from the test process.
    public var environment: [String: String] {
        let dir = directory.path
        var env: [String: String] = [
            "PATH": ExternalTools.searchPath,
            "HOME": "\(dir)/home",
            "XDG_RUNTIME_DIR": dir,
            "PIPEWIRE_RUNTIME_DIR": dir,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/bus",
            "XDG_CONFIG_HOME": "\(dir)/config",
            "XDG_STATE_HOME": "\(dir)/state",
            "XDG_DATA_HOME": "\(dir)/data",
            "XDG_CACHE_HOME": "\(dir)/cache",
            "LANG": "C.UTF-8",
            ProcessSweeper.graphMarker: dir,
            ProcessSweeper.ownerMarker: String(getpid()),
        ]
        let inherited = ProcessInfo.processInfo.environment
        for key in ["LLVM_PROFILE_FILE", "SWIFT_BACKTRACE", "TMPDIR", "PIPEWIRE_DEBUG", "WIREPLUMBER_DEBUG"] {
            if let v = inherited[key] { env[key] = v }
        }
        return env
    }

    /// What a caller that keeps its own HOME and XDG homes needs to join this graph
    /// (`soundscape-bench graph` prints it for the scripts): `XDG_RUNTIME_DIR` =
    /// `PIPEWIRE_RUNTIME_DIR`, `DBUS_SESSION_BUS_ADDRESS` and the cleanup markers,
    /// so that what it starts there is stopped with the graph.
    public var sessionEnvironment: [String: String] {
        let keys: Set = [
            "XDG_RUNTIME_DIR", "PIPEWIRE_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", ProcessSweeper.graphMarker,
            ProcessSweeper.ownerMarker,
        ]
        return environment.filter { keys.contains($0.key) }
    }

    /// `environment` with extra variables merged in (extra wins).
    public func environment(adding extra: [String: String]) -> [String: String] {
        environment.merging(extra) { $1 }
    }

    // MARK: - Daemon control

    public func process(_ daemon: Daemon) -> ChildProcess? { lock.withLock { daemons[daemon] } }

    public func isRunning(_ daemon: Daemon) -> Bool { process(daemon)?.isRunning ?? false }

    static let terminatingSignals: Set<Int32> = [SIGKILL, SIGTERM, SIGINT, SIGQUIT, SIGABRT, SIGSEGV, SIGHUP]

    private func sendSignal(to daemon: Daemon, _ sig: Int32) {
        guard let child = process(daemon) else { return }
        child.signal(sig)
        if Self.terminatingSignals.contains(sig) {
            _ = child.waitForExit(timeout: .seconds(5))
        }
    }

    /// Sends `sig` to pipewire; for terminating signals waits until it exited.
    /// (WirePlumber exits by itself when PipeWire goes away.) Use SIGSTOP to
    /// simulate a hung server. Nodes created in the graph are lost.
    public func killPipeWire(signal sig: Int32 = SIGKILL) { sendSignal(to: .pipewire, sig) }

    /// Sends `sig` to wireplumber; for terminating signals waits until it exited.
    public func killWirePlumber(signal sig: Int32 = SIGKILL) { sendSignal(to: .wireplumber, sig) }

    /// Stops pipewire (and wireplumber, which depends on it) if running, then
    /// starts both again and waits until they are ready. Null sinks must be
    /// recreated afterwards.
    public func restartPipeWire() throws {
        if let pw = process(.pipewire), pw.isRunning { pw.terminate(gracePeriod: .seconds(3)) }
        if let wp = process(.wireplumber), wp.isRunning, wp.waitForExit(timeout: .seconds(2)) == nil {
            wp.terminate(gracePeriod: .seconds(2))
        }
        do {
            try startPipeWire()
            try startWirePlumber()
            try checkIsolation()
        } catch {
            throw HarnessError("restartPipeWire() failed: \(error)\n\(logTail(lines: 30))")
        }
    }

    /// Stops wireplumber if running, starts it again and waits until ready.
    public func restartWirePlumber() throws {
        if let wp = process(.wireplumber), wp.isRunning { wp.terminate(gracePeriod: .seconds(3)) }
        do {
            try startWirePlumber()
            try checkIsolation()
        } catch {
            throw HarnessError("restartWirePlumber() failed: \(error)\n\(logTail(lines: 30))")
        }
    }

    // MARK: - Running things in the graph

    /// Runs a short command with `environment` (cwd = graph dir).
    public func run(_ arguments: [String], timeout: Duration = .seconds(10)) throws -> ProcessResult {
        try ChildProcess.run(arguments, environment: environment, currentDirectory: directory, timeout: timeout)
    }

    /// Starts a long-running child in this graph's environment; it is stopped
    /// by `stop()` (SIGTERM, then SIGKILL) before the daemons. stdout and
    /// stderr default to `logs/<name>.log` (included in `logTail`).
    public func spawn(
        _ executable: String,
        _ arguments: [String] = [],
        name: String? = nil,
        extraEnvironment: [String: String] = [:],
        currentDirectory: URL? = nil,
        stdout: ChildProcess.Output? = nil,
        stderr: ChildProcess.Output? = nil
    ) throws -> ChildProcess {
        let baseName = name ?? URL(fileURLWithPath: executable).lastPathComponent
        let logName = uniqueName(baseName)
        let log = logDirectory.appendingPathComponent("\(logName).log")
        let child = try ChildProcess.start(
            executable, arguments, environment: environment(adding: extraEnvironment),
            currentDirectory: currentDirectory ?? directory,
            stdout: stdout ?? .file(log), stderr: stderr ?? .file(log), name: logName)
        let accepted = lock.withLock { () -> Bool in
            everStarted.append(child)
            guard !stopped else { return false }
            children.append(child)
            return true
        }
        if !accepted {
            child.killNow()
            throw HarnessError("spawn(\(executable)) after stop()")
        }
        return child
    }

    func uniqueName(_ base: String) -> String {
        lock.withLock {
            var name = base
            var n = 2
            while usedNames.contains(name) {
                name = "\(base)-\(n)"
                n += 1
            }
            usedNames.insert(name)
            return name
        }
    }

    /// Starts `pw-play` on `file` (optionally with a media role such as
    /// "Communication" and/or an explicit target node).
    public func play(
        _ file: URL, mediaRole: String? = nil, target: String? = nil, extraArguments: [String] = []
    ) throws -> ChildProcess {
        var args: [String] = []
        if let mediaRole { args += ["--media-role", mediaRole] }
        if let target { args += ["--target", target] }
        args += extraArguments + [file.path]
        return try spawn("pw-play", args, name: "pw-play")
    }

    /// Plays `file` with `pw-play` and waits until it finishes; throws on a non-zero exit.
    public func playToCompletion(
        _ file: URL, mediaRole: String? = nil, target: String? = nil, timeout: Duration = .seconds(30)
    ) throws {
        let player = try play(file, mediaRole: mediaRole, target: target)
        guard let status = player.waitForExitStatus(timeout: timeout) else {
            player.killNow()
            throw HarnessError("pw-play \(file.lastPathComponent) did not finish within \(formatSeconds(timeout))")
        }
        guard status == .exited(0) else {
            throw HarnessError("pw-play \(file.lastPathComponent) \(status)\n\(logTail(lines: 10))")
        }
    }

    // MARK: - Logs

    /// The last `lines` lines of every log in `logs/`, each under a header,
    /// for failure messages.
    public func logTail(lines: Int = 20) -> String {
        guard let dir = lock.withLock({ _directory }) else { return "(graph not started)" }
        let logs = dir.appendingPathComponent("logs")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: logs.path) else {
            return "(no logs in \(logs.path))"
        }
        var out = ""
        for name in names.sorted() where name.hasSuffix(".log") {
            let text = (try? String(contentsOf: logs.appendingPathComponent(name), encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines + 1)
            out += "----- \(name) (last \(lines) lines) -----\n\(tail.joined(separator: "\n"))\n"
        }
        return out.isEmpty ? "(no logs in \(logs.path))" : out
    }
}
