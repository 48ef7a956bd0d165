import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starting the graph (dbus-daemon, pipewire, wireplumber, the watchdog) and stopping it, so that
/// nothing it started outlives the test.
extension PipeWireGraph {
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
            // Proven on 0.5 by scripts/check-wireplumber-05.
            let noHardware = noHardwareConfiguration
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

    func requireAlive(_ child: ChildProcess, during what: String) throws {
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

    func startPipeWire() throws {
        let child = try launch(.pipewire)
        try waitUntil(timeout: startupTimeout, pollInterval: .milliseconds(20), "PipeWire to answer `pw-cli info 0`") {
            try requireAlive(child, during: "waiting for it to answer")
            guard let r = try? run(["pw-cli", "info", "0"], timeout: .seconds(2)) else { return false }
            return r.succeeded && r.stdout.contains("id: 0")
        }
    }

    func startWirePlumber() throws {
        let child = try launch(.wireplumber)
        try waitUntil(
            timeout: startupTimeout, pollInterval: .milliseconds(50),
            "WirePlumber (pid \(child.pid)) to publish the \"default\" metadata"
        ) {
            try requireAlive(child, during: "waiting for its \"default\" metadata")
            return (try? wirePlumberIsReady(pid: child.pid)) ?? false
        }
        try startMetadataWitness()
    }

    /// A listener of the `default` metadata for the graph's whole life, bound
    /// once WirePlumber is ready, that writes each line it hears to
    /// `logs/default-metadata.log` with the time it came (as the daemon's log
    /// gives it). It is a settled listener, as the daemon under test is: when
    /// the daemon missed a change, this log says whether module-metadata
    /// forwarded the change to such listeners at all (see `setDefaultSink`).
    /// A failure's `logTail` carries it. It hears the defaults (subject 0),
    /// not keys about a node made after it last spoke to the server: those
    /// the server holds back from it as stale (`pw_impl_client_check_permissions`).
    /// Each line is stamped by bash itself (`EPOCHREALTIME`, its digits only, so
    /// whatever the locale's decimal point), with no process forked per line.
    private func startMetadataWitness() throws {
        let script = """
            pw-metadata -m -n default | while IFS= read -r line; do
              t=${EPOCHREALTIME//[!0-9]/}
              printf '%(%H:%M:%S)T.%s %s\\n' "${t:0:-6}" "${t: -6:3}" "$line"
            done
            """
        _ = try spawn("/bin/bash", ["-c", script], name: "default-metadata")
    }

    /// True when a "default" metadata object owned by a client of `pid` exists.
    ///
    /// Read from the registry's listing (`pw-cli ls`), not from `pw-dump`,
    /// which hides metadata without entries. Both bind every global, the
    /// metadata included ("immediately bind the object always", pw-cli.c),
    /// and wait for WirePlumber to answer the server's ping about it; one
    /// killed before that answer leaves module-metadata forwarding no change
    /// to any settled listener, for good (see `setDefaultSink`). So the
    /// timeout, as `snapshot`'s, only catches a WirePlumber that hangs: a
    /// listing takes some 40 ms while WirePlumber starts.
    private func wirePlumberIsReady(pid: Int32) throws -> Bool {
        let listing = try run(["pw-cli", "ls"], timeout: .seconds(30))
        guard listing.succeeded else { return false }
        let objects = Self.parsePwCliList(listing.stdout)
        let clientIDs = Set(
            objects.filter { $0.type.hasPrefix("PipeWire:Interface:Client/") && $0.props["pipewire.sec.pid"] == String(pid) }
                .map(\.id))
        return objects.contains { object in
            object.type.hasPrefix("PipeWire:Interface:Metadata/")
                && object.props["metadata.name"] == "default"
                && object.props["client.id"].flatMap(Int.init).map(clientIDs.contains) == true
        }
    }

    /// `scripts/no-hardware/wireplumber`: WirePlumber's user configuration in a
    /// graph that must not touch real devices, in this checkout.
    public static var checkoutNoHardwareConfiguration: URL {
        ProductLocator.packageRoot.appendingPathComponent("scripts/no-hardware/wireplumber", isDirectory: true)
    }

    /// Throws, naming them, if the graph has devices: a session manager found
    /// hardware, which a test graph must never touch (the sound card would play
    /// the tests, Bluetooth headsets would change profile).
    public func requireNoDevices() throws {
        let devices = try snapshot().devices
        guard !devices.isEmpty else { return }
        throw HarnessError(
            """
            the test graph has \(devices.count) device(s): \(devices.map(\.description).joined(separator: ", ")); \
            its WirePlumber did not keep away from hardware (is \(noHardwareConfiguration.path) in its XDG_CONFIG_HOME?)
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
}
