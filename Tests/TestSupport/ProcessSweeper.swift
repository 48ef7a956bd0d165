import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds processes by an environment marker via `/proc/<pid>/environ`
/// (Linux). Every process a `PipeWireGraph` starts — and anything a test starts
/// with `graph.environment` — carries `SOUNDSCAPE_TEST_GRAPH=<graph dir>`, so
/// stragglers can be found and killed even if they escaped their process group.
public enum ProcessSweeper {
    public static let graphMarker = "SOUNDSCAPE_TEST_GRAPH"
    public static let ownerMarker = "SOUNDSCAPE_TEST_OWNER_PID"

    /// PIDs (excluding this process) whose initial environment contains `name=value`.
    /// Zombies have an empty environ and are not reported.
    public static func processes(withEnvironment name: String, value: String) -> [Int32] {
        let needle = Array("\(name)=\(value)".utf8) + [0]
        return allProcesses { env in env.contains(needle) }
    }

    /// pid -> value of `name` for every process that has `name` in its environment.
    static func processes(withVariable name: String) -> [(pid: Int32, value: String)] {
        let prefix = Array("\(name)=".utf8)
        var result: [(Int32, String)] = []
        for pid in allPIDs() {
            guard let env = environ(of: pid) else { continue }
            for entry in env.split(separator: 0, omittingEmptySubsequences: true)
            where entry.starts(with: prefix) {
                result.append((pid, String(decoding: entry.dropFirst(prefix.count), as: UTF8.self)))
            }
        }
        return result
    }

    static func allPIDs() -> [Int32] {
        let me = getpid()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { Int32($0) }.filter { $0 != me }
    }

    static func environ(of pid: Int32) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ"), !data.isEmpty else {
            return nil
        }
        // Make every entry NUL-terminated on both sides for exact matching.
        return [0] + Array(data) + (data.last == 0 ? [] : [0])
    }

    private static func allProcesses(matching predicate: ([UInt8]) -> Bool) -> [Int32] {
        allPIDs().filter { pid in
            guard let env = environ(of: pid) else { return false }
            return predicate(env)
        }
    }

    /// True if `pid` exists and is not a zombie.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = ProcStat(path: "/proc/\(pid)/stat") else { return true }
        let state = stat.field(3)?.first
        return state != "Z" && state != "X"
    }

    /// SIGKILLs every process carrying `name=value` and waits (bounded) until
    /// they are gone. Returns the pids that were killed.
    @discardableResult
    public static func killAll(withEnvironment name: String, value: String, timeout: Duration = .seconds(3))
        -> [Int32]
    {
        let victims = processes(withEnvironment: name, value: value)
        for pid in victims { _ = kill(pid, SIGKILL) }
        if !victims.isEmpty {
            _ = try? waitUntil(timeout: timeout, pollInterval: .milliseconds(20), "stragglers to die") {
                victims.allSatisfy { !isAlive($0) }
            }
        }
        return victims
    }

    private static let orphanSweep: Void = {
        // Kill graph processes whose owning test process no longer exists
        // (a previous run that was SIGKILLed together with its watchdog).
        for (pid, owner) in processes(withVariable: ownerMarker) {
            if let ownerPID = Int32(owner), ownerPID != getpid(), !isAlive(ownerPID) {
                _ = kill(pid, SIGKILL)
            }
        }
    }()

    /// Runs once per test process.
    static func sweepOrphansOnce() {
        _ = orphanSweep
    }
}
