import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Varlink

/// The release `soundscaped` started in the bench's graph with its own socket
/// and state directory, and one control connection to it.
final class DaemonUnderTest: @unchecked Sendable {
    static let interface = "io.soundscaped.Player"

    let graph: PipeWireGraph
    let executable: String
    let socket: String
    let stateDirectory: URL
    let extraArguments: [String]
    let group: any EventLoopGroup
    private(set) var process: ChildProcess?
    private(set) var client: VarlinkClient?

    /// `stateDirectory`: its --state-dir (default: one the graph's daemons share).
    init(
        graph: PipeWireGraph, executable: String, extraArguments: [String], group: any EventLoopGroup, stateDirectory: URL? = nil
    ) {
        self.graph = graph
        self.executable = executable
        self.extraArguments = extraArguments
        self.group = group
        socket = graph.directory.appendingPathComponent("soundscaped-bench/control.sock").path
        self.stateDirectory = stateDirectory ?? graph.directory.appendingPathComponent("soundscaped-bench-state")
    }

    var pid: Int32? { process?.pid }

    /// Starts the daemon and connects once its socket answers `GetStatus` (bounded: 15 s).
    func start() async throws {
        try spawn()
        try await connectWhenAnswering()
    }

    /// Starts the process and returns at once (no connection yet): a start can
    /// then be timed from the moment of the spawn, as systemd's restart would be.
    func spawn() throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        process = try graph.spawn(
            executable, ["--socket", socket, "--state-dir", stateDirectory.path] + extraArguments, name: "soundscaped")
    }

    /// Connects once the spawned daemon's socket answers `GetStatus` (bounded: 15 s).
    func connectWhenAnswering() async throws {
        guard let child = process else { throw HarnessError("soundscaped was not spawned") }
        let deadline = monoNanos() + 15_000_000_000
        var lastError = "no socket yet"
        while monoNanos() < deadline {
            if let status = child.exitStatus {
                throw HarnessError("soundscaped \(status) before its socket answered\n\(graph.logTail(lines: 20))")
            }
            if FileManager.default.fileExists(atPath: socket) {
                do {
                    let client = try await VarlinkClient.connect(unixPath: socket, eventLoopGroup: group)
                    _ = try await client.call("\(Self.interface).GetStatus")
                    self.client = client
                    return
                } catch {
                    lastError = "\(error)"
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError(
            "timed out after 15 s waiting for soundscaped to answer on \(socket) (last: \(lastError))\n\(graph.logTail(lines: 20))")
    }

    /// SIGKILL, as a crash: nothing is saved on the way out, so the next start
    /// finds what the last answered command left on disk. Returns once it is gone.
    func crash() async throws {
        await client?.close()
        client = nil
        guard let process else { return }
        self.process = nil
        guard process.killNow() != nil else { throw HarnessError("soundscaped (pid \(process.pid)) did not die on SIGKILL") }
    }

    func connect() async throws -> VarlinkClient {
        try await VarlinkClient.connect(unixPath: socket, eventLoopGroup: group)
    }

    private var control: VarlinkClient {
        get throws {
            guard let client else { throw HarnessError("soundscaped is not connected") }
            return client
        }
    }

    /// Calls a method of io.soundscaped.Player, bounded by `timeout`.
    @discardableResult
    func call(_ method: String, _ parameters: [String: JSONValue] = [:], timeout: Duration = .seconds(10))
        async throws -> [String: JSONValue]
    {
        let client = try control
        return try await withTimeout(timeout, "\(method) to reply") {
            try await client.call("\(Self.interface).\(method)", parameters: parameters)
        }
    }

    func status() async throws -> [String: JSONValue] {
        try await call("GetStatus")["status"]?.objectValue ?? [:]
    }

    /// Waits until GetStatus says `state == wanted` (bounded).
    func waitForState(_ wanted: String, timeout: Duration = .seconds(5)) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = "?"
        while ContinuousClock.now < deadline {
            last = try await status()["state"]?.stringValue ?? "?"
            if last == wanted { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("soundscaped did not reach state '\(wanted)' within \(timeout) (it is '\(last)')")
    }

    /// The lines every daemon this graph ran logged as errors (its own ERROR lines and
    /// PipeWire's errors): a gate fails on any.
    static func loggedErrors(in graph: PipeWireGraph) -> [String] {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: graph.logDirectory.path)) ?? []
        return logs.filter { $0.hasPrefix("soundscaped") }.sorted().flatMap { name in
            let text = (try? String(contentsOf: graph.logDirectory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.contains("ERROR") || $0.contains("PipeWire error") }.map { "\(name): \($0)" }
        }
    }

    func stop() async {
        await client?.close()
        client = nil
        if let process {
            process.terminate(gracePeriod: .seconds(5))
        }
        process = nil
    }
}

/// Runs `body`, throwing a clear error if it does not finish within `timeout`.
func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw HarnessError("timed out after \(timeout) waiting for \(what)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
