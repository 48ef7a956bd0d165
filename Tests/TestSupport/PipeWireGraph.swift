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
    public let extraPipeWireConfig: String?

    private let lock = NSLock()
    private var _directory: URL?
    private var _keepOnFailure: Bool
    private var failed = false
    private var stopped = false
    private var daemons: [Daemon: ChildProcess] = [:]
    private var children: [ChildProcess] = []
    private var everStarted: [ChildProcess] = []
    private var watchdog: ChildProcess?
    private var usedNames: Set<String> = []

    /// - Parameters:
    ///   - keepOnFailure: keep the temp directory when the graph was marked failed
    ///     (`markFailed()`, a throwing `withGraph` body, or a failed `start()`).
    ///   - startupTimeout: bound for each daemon to become ready.
    ///   - isolateHardware: disable WirePlumber's hardware monitors, and fail if the graph has a device.
    ///   - extraPipeWireConfig: written to `pipewire.conf.d/90-test.conf` in the
    ///     graph's `XDG_CONFIG_HOME` (e.g. `context.properties = { default.clock.quantum = 256 }`).
    public init(
        keepOnFailure: Bool = ProcessInfo.processInfo.environment[PipeWireGraph.keepDirectoriesVariable] == "1",
        startupTimeout: Duration = .seconds(10),
        isolateHardware: Bool = true,
        extraPipeWireConfig: String? = nil
    ) {
        self._keepOnFailure = keepOnFailure
        self.startupTimeout = startupTimeout
        self.isolateHardware = isolateHardware
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
    /// LLVM_PROFILE_FILE / SWIFT_BACKTRACE / TMPDIR passed through.
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
        for key in ["LLVM_PROFILE_FILE", "SWIFT_BACKTRACE", "TMPDIR"] {
            if let v = inherited[key] { env[key] = v }
        }
        return env
    }

    /// `environment` with extra variables merged in (extra wins).
    public func environment(adding extra: [String: String]) -> [String: String] {
        environment.merging(extra) { $1 }
    }

    // MARK: - Lifecycle

    /// Creates the temp dir and starts dbus-daemon, pipewire and wireplumber,
    /// waiting (bounded by `startupTimeout` each) until PipeWire answers
    /// `pw-cli info 0` and WirePlumber has published the "default" metadata.
    /// On failure everything is torn down and the error carries the log tails.
    public func start() throws {
        try lock.withLock {
            guard _directory == nil else {
                throw HarnessError("PipeWireGraph.start() called twice (a stopped graph cannot be restarted; make a new one)")
            }
            stopped = false
        }
        try ExternalTools.require(ExternalTools.graphTools)
        ProcessSweeper.sweepOrphansOnce()

        // Unix socket paths are limited to 108 bytes: avoid a long $TMPDIR.
        var base = FileManager.default.temporaryDirectory.path
        if base.utf8.count > 60 { base = "/tmp" }
        var template = Array((base + "/soundscape-graph-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        let dir = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        _ = chmod(dir.path, 0o700)
        lock.withLock { _directory = dir }

        do {
            try prepareDirectory(dir)
            try startWatchdog(dir)
            try startDBus()
            try startPipeWire()
            try startWirePlumber()
            try checkIsolation()
        } catch {
            markFailed()
            let tail = logTail(lines: 30)
            stop()
            throw HarnessError("PipeWireGraph.start() failed: \(error)\n\(tail)")
        }
    }

    private func prepareDirectory(_ dir: URL) throws {
        let fm = FileManager.default
        for sub in ["logs", "home", "config", "state", "data", "cache", "recordings"] {
            try fm.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let config = dir.appendingPathComponent("config")
        if isolateHardware {
            // The same files as scripts/lib.sh's private graph, proven on 0.5 by scripts/check-wireplumber-05.
            let noHardware = Self.noHardwareConfiguration
            guard fm.fileExists(atPath: noHardware.path) else {
                throw HarnessError("no \(noHardware.path): the graph cannot keep WirePlumber away from hardware")
            }
            try fm.copyItem(at: noHardware, to: config.appendingPathComponent("wireplumber"))
        }
        if let extraPipeWireConfig {
            let confd = config.appendingPathComponent("pipewire/pipewire.conf.d")
            try fm.createDirectory(at: confd, withIntermediateDirectories: true)
            try extraPipeWireConfig.write(
                to: confd.appendingPathComponent("90-test.conf"), atomically: true, encoding: .utf8)
        }
    }

    /// A `/bin/sh` loop that outlives a crashed test process and cleans up
    /// (keeping the directory if `keepOnFailure` was set: a crash is a failure).
    private func startWatchdog(_ dir: URL) throws {
        let script = """
            parent=$1; dir=$2; keep=$3
            alive() {
              read -r line < /proc/$parent/stat 2>/dev/null || return 1
              s=${line##*) }; s=${s%% *}
              [ "$s" != Z ] && [ "$s" != X ]
            }
            while alive; do sleep 0.5; done
            for e in /proc/[0-9]*/environ; do
              if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qxF "\(ProcessSweeper.graphMarker)=$dir"; then
                p=${e#/proc/}; kill -KILL "${p%/environ}" 2>/dev/null
              fi
            done
            [ "$keep" = 1 ] || [ -e "$dir/.keep" ] || rm -rf "$dir"
            """
        let child = try ChildProcess.start(
            "/bin/sh", ["-c", script, "soundscape-graph-watchdog", String(getpid()), dir.path, keepOnFailure ? "1" : "0"],
            environment: ["PATH": ExternalTools.searchPath], stdout: .null, stderr: .null,
            name: "watchdog")
        lock.withLock {
            watchdog = child
            everStarted.append(child)
        }
    }

    private func launch(_ daemon: Daemon) throws -> ChildProcess {
        let dir = directory
        let log = logDirectory.appendingPathComponent("\(daemon.rawValue).log")
        appendToLog(log, "=== \(Date()) starting \(daemon.rawValue) ===\n")
        let arguments: [String]
        switch daemon {
        case .dbus:
            arguments = ["--session", "--address=unix:path=\(dir.path)/bus", "--nofork", "--nopidfile", "--nosyslog"]
        case .pipewire, .wireplumber:
            arguments = []
        }
        let child = try ChildProcess.start(
            daemon.rawValue, arguments, environment: environment, currentDirectory: dir,
            stdout: .file(log), stderr: .file(log), name: daemon.rawValue)
        lock.withLock {
            daemons[daemon] = child
            everStarted.append(child)
        }
        return child
    }

    private func appendToLog(_ url: URL, _ text: String) {
        if let handle = try? FileHandle(forWritingTo: url) {
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            try? handle.close()
        } else {
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8))
        }
    }

    private func requireAlive(_ child: ChildProcess, during what: String) throws {
        if let status = child.exitStatus {
            throw HarnessError("\(child.name) (pid \(child.pid)) \(status) while \(what)")
        }
    }

    private func startDBus() throws {
        let child = try launch(.dbus)
        let socket = directory.appendingPathComponent("bus").path
        try waitUntil(timeout: startupTimeout, pollInterval: .milliseconds(10), "dbus-daemon socket \(socket)") {
            try requireAlive(child, during: "waiting for its socket")
            return FileManager.default.fileExists(atPath: socket)
        }
    }

    private func startPipeWire() throws {
        let child = try launch(.pipewire)
        try waitUntil(timeout: startupTimeout, pollInterval: .milliseconds(20), "PipeWire to answer `pw-cli info 0`") {
            try requireAlive(child, during: "waiting for it to answer")
            guard let r = try? run(["pw-cli", "info", "0"], timeout: .seconds(2)) else { return false }
            return r.succeeded && r.stdout.contains("id: 0")
        }
    }

    private func startWirePlumber() throws {
        let child = try launch(.wireplumber)
        try waitUntil(
            timeout: startupTimeout, pollInterval: .milliseconds(50),
            "WirePlumber (pid \(child.pid)) to publish the \"default\" metadata"
        ) {
            try requireAlive(child, during: "waiting for its \"default\" metadata")
            return (try? wirePlumberIsReady(pid: child.pid)) ?? false
        }
    }

    /// True when a "default" metadata object owned by a client of `pid` exists.
    /// (`pw-dump` hides metadata without entries, so `pw-cli ls` is used.)
    private func wirePlumberIsReady(pid: Int32) throws -> Bool {
        let clientIDs = Set(try snapshot().clients(ofProcess: pid).map(\.id))
        guard !clientIDs.isEmpty else { return false }
        let listing = try run(["pw-cli", "ls", "Metadata"], timeout: .seconds(2))
        guard listing.succeeded else { return false }
        return Self.parsePwCliList(listing.stdout).contains { object in
            object.props["metadata.name"] == "default"
                && object.props["client.id"].flatMap(Int.init).map(clientIDs.contains) == true
        }
    }

    /// `scripts/no-hardware/wireplumber`: WirePlumber's user configuration in a
    /// graph that must not touch real devices.
    public static var noHardwareConfiguration: URL {
        ProductLocator.packageRoot.appendingPathComponent("scripts/no-hardware/wireplumber", isDirectory: true)
    }

    /// Throws, naming them, if the graph has devices: a session manager found
    /// hardware, which a test graph must never touch (the sound card would play
    /// the tests, Bluetooth headsets would change profile).
    public func requireNoDevices() throws {
        let devices = try snapshot().devices
        guard !devices.isEmpty else { return }
        throw HarnessError("""
            the test graph has \(devices.count) device(s): \(devices.map(\.description).joined(separator: ", ")); \
            its WirePlumber did not keep away from hardware (is \(Self.noHardwareConfiguration.path) in its XDG_CONFIG_HOME?)
            """)
    }

    /// `requireNoDevices` for a graph that isolates hardware.
    func checkIsolation() throws {
        if isolateHardware { try requireNoDevices() }
    }

    /// Parses `pw-cli ls` output into (id, type, props).
    static func parsePwCliList(_ text: String) -> [(id: Int, type: String, props: [String: String])] {
        var result: [(id: Int, type: String, props: [String: String])] = []
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("id "), let comma = line.firstIndex(of: ",") {
                let id = Int(line[line.index(line.startIndex, offsetBy: 3)..<comma]) ?? -1
                let type = line[comma...].replacingOccurrences(of: ", type ", with: "")
                result.append((id, type, [:]))
            } else if let eq = line.range(of: " = "), !result.isEmpty {
                let key = String(line[..<eq.lowerBound])
                var value = String(line[eq.upperBound...])
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast())
                }
                result[result.count - 1].props[key] = value
            }
        }
        return result
    }

    /// Terminates everything (spawned children first, then wireplumber,
    /// pipewire, dbus-daemon), SIGKILLs stragglers, sweeps marked processes and
    /// removes the directory unless `keepOnFailure` and the graph was marked
    /// failed. Idempotent; never throws.
    public func stop() {
        let state = lock.withLock {
            () -> (dir: URL?, children: [ChildProcess], daemons: [Daemon: ChildProcess], watchdog: ChildProcess?, keep: Bool)? in
            guard !stopped, _directory != nil else { return nil }
            stopped = true
            let s = (_directory, children, daemons, watchdog, failed && _keepOnFailure)
            children = []
            daemons = [:]
            watchdog = nil
            return s
        }
        guard let state, let dir = state.dir else { return }

        Self.terminateAll(state.children.reversed(), grace: .seconds(2))
        for daemon in [Daemon.wireplumber, .pipewire, .dbus] {
            if let child = state.daemons[daemon] { Self.terminateAll([child], grace: .seconds(2)) }
        }
        ProcessSweeper.killAll(withEnvironment: ProcessSweeper.graphMarker, value: dir.path)
        state.watchdog?.killNow()

        if state.keep {
            FileHandle.standardError.write(Data("PipeWireGraph: keeping \(dir.path) for inspection\n".utf8))
        } else {
            try? FileManager.default.removeItem(at: dir)
        }
    }

    /// SIGTERM + SIGCONT to all, wait until `grace` has passed, then SIGKILL the
    /// process groups of those still running.
    static func terminateAll(_ processes: [ChildProcess], grace: Duration) {
        let running = processes.filter(\.isRunning)
        guard !running.isEmpty else { return }
        for p in running {
            p.signal(SIGTERM)
            p.signal(SIGCONT)
        }
        let deadline = ContinuousClock.now.advanced(by: grace)
        for p in running {
            if p.waitForExit(timeout: max(.zero, deadline - ContinuousClock.now)) == nil {
                p.killNow()
            }
        }
    }

    /// Every pid this graph ever started (daemons incl. restarted ones,
    /// spawned children, the watchdog).
    public var processIDs: [Int32] { lock.withLock { everStarted.map(\.pid) } }

    /// Processes of this graph that are still alive: started ones not yet
    /// reaped, plus any process carrying this graph's environment marker.
    /// Empty after a successful `stop()`.
    public func livingProcessIDs() -> [Int32] {
        let (started, dir) = lock.withLock { (everStarted, _directory) }
        var pids = Set(started.filter(\.isRunning).map(\.pid))
        if let dir {
            pids.formUnion(ProcessSweeper.processes(withEnvironment: ProcessSweeper.graphMarker, value: dir.path))
        }
        return pids.sorted()
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

    private func uniqueName(_ base: String) -> String {
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

    // MARK: - Inspecting the graph

    /// One `pw-dump`, parsed.
    public func snapshot() throws -> Snapshot {
        let result = try run(["pw-dump"], timeout: .seconds(5))
        guard result.succeeded else { throw HarnessError("pw-dump failed: \(result)") }
        return try Snapshot(pwDumpJSON: Data(result.stdout.utf8))
    }

    public func nodes() throws -> [Node] { try snapshot().nodes }

    public func links() throws -> [Link] { try snapshot().links }

    public func clients() throws -> [Client] { try snapshot().clients }

    /// The sink WirePlumber currently uses (`default.audio.sink`), or nil.
    public func defaultSink() throws -> String? { try snapshot().defaultSink }

    /// The user-configured default (`default.configured.audio.sink`), or nil.
    public func configuredDefaultSink() throws -> String? { try snapshot().configuredDefaultSink }

    /// Polls `pw-dump` until a node satisfies `predicate` and returns it.
    @discardableResult
    public func waitForNode(
        where predicate: (Node) -> Bool, timeout: Duration = .seconds(5), description: String = "a matching node"
    ) throws -> Node {
        var last: Snapshot?
        do {
            return try waitForValue(timeout: timeout, "node") { () -> Node? in
                guard let snap = try? snapshot() else { return nil }
                last = snap
                return snap.nodes.first(where: predicate)
            }
        } catch {
            throw HarnessError(
                "Timed out after \(formatSeconds(timeout)) waiting for \(description); nodes: \(last?.nodes.map(\.description).joined(separator: ", ") ?? "<pw-dump failed>")"
            )
        }
    }

    /// Polls until no node satisfies `predicate`.
    public func waitForNoNode(
        where predicate: (Node) -> Bool, timeout: Duration = .seconds(5), description: String = "node to disappear"
    ) throws {
        try waitUntil(timeout: timeout, description) {
            guard let snap = try? snapshot() else { return false }
            return !snap.nodes.contains(where: predicate)
        }
    }

    /// Creates a `support.null-audio-sink` (stereo FL/FR, `object.linger`) and
    /// waits until it shows up. `properties` override/extend the defaults; values
    /// starting with `[` or `{` and numbers/bools are passed raw, others quoted.
    @discardableResult
    public func createNullSink(name: String, properties: [String: String] = [:], timeout: Duration = .seconds(5))
        throws -> Node
    {
        var props: [String: String] = [
            "factory.name": "support.null-audio-sink",
            "node.name": name,
            "node.description": name,
            "media.class": "Audio/Sink",
            "object.linger": "true",
            "audio.position": "[ FL FR ]",
        ]
        props.merge(properties) { $1 }
        let spa = "{ " + props.keys.sorted().map { "\($0)=\(Self.spaValue(props[$0]!))" }.joined(separator: " ") + " }"
        let result = try run(["pw-cli", "create-node", "adapter", spa])
        if !result.succeeded || result.stdout.contains("Error") || result.stderr.contains("Error") {
            throw HarnessError("Creating null sink '\(name)' failed: \(result)")
        }
        return try waitForNode(where: { $0.name == name }, timeout: timeout, description: "null sink '\(name)'")
    }

    static func spaValue(_ value: String) -> String {
        if value.hasPrefix("[") || value.hasPrefix("{") || value == "true" || value == "false" || Double(value) != nil {
            return value
        }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// Destroys every node named `name` and waits until none is left.
    public func destroyNode(name: String, timeout: Duration = .seconds(5)) throws {
        let ids = try snapshot().nodes.filter { $0.name == name }.map(\.id)
        guard !ids.isEmpty else { throw HarnessError("destroyNode: no node named '\(name)'") }
        for id in ids {
            try run(["pw-cli", "destroy", String(id)]).requireSuccess()
        }
        try waitForNoNode(where: { $0.name == name }, timeout: timeout, description: "node '\(name)' to be destroyed")
    }

    /// Sets `default.configured.audio.sink` and waits until WirePlumber has
    /// made it the effective default (`default.audio.sink`).
    ///
    /// Watched by one `pw-metadata -m`, bound before the change, not by polling
    /// `pw-dump`: while a client's binding of a metadata is being set up,
    /// PipeWire's module-metadata (`metadata_property`, in 0.3.65, 1.4 and
    /// upstream's today) forwards a change only to that binding, so a poll
    /// binding at the moment WirePlumber switched the default hid the switch
    /// from the daemon under test (3 switches of some 350 in a stress run). The
    /// owner answers the monitor's binding before it sees the write, so the
    /// switch the write causes reaches every client.
    public func setDefaultSink(name: String, timeout: Duration = .seconds(5)) throws {
        let monitor = try spawn("pw-metadata", ["-m", "-n", "default"], name: "pw-metadata-monitor", stdout: .capture)
        defer { _ = monitor.terminate() }
        var seen: [String] = []
        /// The next `default.audio.sink` the monitor prints.
        func nextDefault(until deadline: ContinuousClock.Instant) throws -> String? {
            while let line = monitor.nextLine(timeout: max(.zero, deadline - ContinuousClock.now)) {
                seen.append(line)
                if line.contains("key:'default.audio.sink'") { return Self.metadataName(inMonitorLine: line) }
            }
            let sinks = (try? snapshot().sinks.compactMap(\.name)) ?? []
            throw HarnessError("""
                Default sink did not become '\(name)' within \(formatSeconds(timeout)); sinks: \(sinks); \
                pw-metadata -m printed: \(seen)
                """)
        }
        let deadline = ContinuousClock.now + timeout
        // Its first lines are the metadata as it is: the default sink is among them once a sink exists.
        let current = try nextDefault(until: deadline)
        let value = "{ \"name\": \"\(name)\" }"
        try run(["pw-metadata", "-n", "default", "0", "default.configured.audio.sink", value, "Spa:String:JSON"])
            .requireSuccess()
        guard current != name else { return }
        while try nextDefault(until: deadline) != name {}
    }

    /// The sink name in a `pw-metadata -m` line such as
    /// `update: id:0 key:'default.audio.sink' value:'{"name":"speaker"}' type:'Spa:String:JSON'`.
    static func metadataName(inMonitorLine line: String) -> String? {
        guard let start = line.range(of: "value:'"), let end = line.range(of: "' type:", options: .backwards),
              start.upperBound <= end.lowerBound
        else { return nil }
        let json = String(line[start.upperBound..<end.lowerBound])
        return try? Snapshot.nodeName(from: JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)))
    }

    /// Waits until WirePlumber reports `name` as the default sink (e.g. after
    /// creating the first sink).
    public func waitForDefaultSink(_ name: String, timeout: Duration = .seconds(5)) throws {
        try waitUntil(timeout: timeout, "default sink to become '\(name)'") { (try? defaultSink()) == name }
    }

    // MARK: - Recording

    /// Starts `pw-record --target <sink> --format f32 --rate 48000 --channels 2`
    /// (which records the sink's monitor) and returns once the recorder is
    /// linked to the sink and data is arriving, so anything played afterwards
    /// is captured. A recording's first graph cycle is silent even when the
    /// sink is already playing: pw-record's link delivers from the cycle after
    /// it starts, whoever plays (measured with pw-play as the player too), so
    /// analyses start from the first sound (`fromFirstSound`).
    public func startRecording(sink: String, file: URL? = nil, timeout: Duration = .seconds(5)) throws -> Recording {
        let url = file ?? recordingsDirectory.appendingPathComponent("\(uniqueName("recording-\(sink)")).wav")
        let recorder = try spawn(
            // stream.capture.sink: without it WirePlumber links a capture stream to the
            // *default* sink's monitor whatever the target, so only the default could be recorded.
            "pw-record", ["--target", sink, "-P", "{ stream.capture.sink=true }", "--format", "f32", "--rate", "48000",
                          "--channels", "2", url.path],
            name: "pw-record-\(sink)")
        var observed = "nothing yet"
        do {
            try waitUntil(timeout: timeout, "pw-record (pid \(recorder.pid)) linked to sink '\(sink)' and writing") {
                try requireAlive(recorder, during: "waiting for it to record")
                guard let snap = try? snapshot() else {
                    observed = "pw-dump failed"
                    return false
                }
                guard let sinkNode = snap.node(named: sink) else {
                    observed = "no node named '\(sink)'; sinks: \(snap.sinks.compactMap(\.name))"
                    return false
                }
                let recorderNodes = Set(snap.nodes(ofProcess: recorder.pid).map(\.id))
                let links = snap.links(from: sinkNode.id).filter { recorderNodes.contains($0.inputNodeID) }
                observed = "recorder nodes \(recorderNodes.sorted()), links from sink: \(links)"
                guard !links.isEmpty, links.allSatisfy({ $0.state == "active" }) else { return false }
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                observed += ", file size \(size)"
                return size > 1024
            }
        } catch {
            recorder.killNow()
            throw HarnessError(
                "startRecording(sink: \(sink)) failed: \(error)\n  last seen: \(observed)\n\(logTail(lines: 15))")
        }
        return Recording(sink: sink, file: url, process: recorder)
    }

    /// Records `sink` for `seconds` and returns the clip.
    public func record(sink: String, seconds: Double) throws -> AudioClip {
        let recording = try startRecording(sink: sink)
        Thread.sleep(forTimeInterval: seconds)
        return try recording.stop()
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

/// A running `pw-record`.
public final class Recording: @unchecked Sendable {
    public let sink: String
    public let file: URL
    public let process: ChildProcess

    init(sink: String, file: URL, process: ChildProcess) {
        self.sink = sink
        self.file = file
        self.process = process
    }

    /// Stops the recorder with SIGINT (so it finalises the WAV header), waits
    /// for it to exit (escalating to SIGTERM/SIGKILL if needed) and parses the file.
    public func stop(timeout: Duration = .seconds(5)) throws -> AudioClip {
        if process.isRunning {
            process.signal(SIGINT)
            if process.waitForExit(timeout: timeout) == nil {
                process.signal(SIGTERM)
                if process.waitForExit(timeout: .seconds(2)) == nil { process.killNow() }
            }
        }
        return try WAVFile.read(file)
    }
}
