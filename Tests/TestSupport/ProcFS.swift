import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads what the kernel publishes about processes under /proc, for the
/// benchmark and the tests. /proc files report a size of 0, so every read goes
/// to EOF.
public enum ProcFS {
    public static let clockTicks = Double(sysconf(Int32(_SC_CLK_TCK)))

    public static func read(_ path: String) -> String? {
        // /proc files report a size of 0: read them with read(2) until EOF.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// utime, stime (clock ticks) and num_threads from /proc/PID/stat: process
    /// totals, which include every thread, living or exited.
    public static func stat(_ pid: Int32) -> (utime: UInt64, stime: UInt64, threads: Int)? {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "comm)": index 0 is field 3 (state); utime is field 14, stime 15, num_threads 20.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 17, let u = UInt64(fields[11]), let s = UInt64(fields[12]), let t = Int(fields[17])
        else { return nil }
        return (u, s, t)
    }

    /// cutime + cstime (clock ticks) from /proc/PID/stat: the CPU of the children it has
    /// reaped (and of what they reaped), kept by the kernel in nanoseconds and reported
    /// in ticks, so a difference is off by a tick at most.
    public static func childrenTicks(_ pid: Int32) -> UInt64? {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Field 16 is cutime, 17 cstime; after "comm)" index 0 is field 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let user = UInt64(fields[13]), let system = UInt64(fields[14]) else { return nil }
        return user + system
    }

    /// "Key:  value kB" lines of /proc/PID/status (or a task's status).
    public static func statusFields(_ path: String) -> [String: UInt64] {
        guard let text = read(path) else { return [:] }
        var out: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            // "VmRSS:\t    1768 kB", "Threads:\t1": the first whitespace-separated word.
            let value = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            if let value, let n = UInt64(value) { out[key] = n }
        }
        return out
    }

    /// One mapping of a file, from /proc/PID/smaps: its permissions ("r-xp"),
    /// resident KB, and the KB of those that are private copies (written).
    public struct FileMapping: Sendable {
        public var permissions: String
        public var residentKB: Int
        public var anonymousKB: Int
        public var isWritable: Bool { permissions.dropFirst().first == "w" }
    }

    /// The mappings of the file at `path` in a process ("self" for this one).
    public static func mappings(of path: String, process: String = "self") -> [FileMapping] {
        guard let text = read("/proc/\(process)/smaps") else { return [] }
        var result: [FileMapping] = []
        var current: FileMapping?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = fields.first else { continue }
            if !key.hasSuffix(":") {
                // A mapping's header: "start-end perms offset dev inode path".
                if let current { result.append(current) }
                current =
                    fields.count >= 6 && fields[5...].joined(separator: " ") == path
                    ? FileMapping(permissions: String(fields[1]), residentKB: 0, anonymousKB: 0) : nil
            } else if key == "Rss:", fields.count > 1 {
                current?.residentKB = Int(fields[1]) ?? 0
            } else if key == "Anonymous:", fields.count > 1 {
                current?.anonymousKB = Int(fields[1]) ?? 0
            }
        }
        if let current { result.append(current) }
        return result
    }

    public static func taskIDs(_ pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { Int32($0) }
    }

    /// Nanoseconds this thread ran (first field of /proc/PID/task/TID/schedstat).
    public static func taskRuntime(_ pid: Int32, _ tid: Int32) -> UInt64? {
        guard let text = read("/proc/\(pid)/task/\(tid)/schedstat") else { return nil }
        return text.split(separator: " ").first.flatMap { UInt64($0) }
    }

    /// Each thread's name and voluntary context switches (its wake-ups, near
    /// enough: a thread that sleeps and is woken switches out once), by thread id.
    public static func voluntarySwitches(of pid: Int32) -> [Int32: (name: String, switches: UInt64)] {
        var result: [Int32: (name: String, switches: UInt64)] = [:]
        for tid in taskIDs(pid) {
            guard let switches = statusFields("/proc/\(pid)/task/\(tid)/status")["voluntary_ctxt_switches"] else { continue }
            result[tid] = (taskName(pid, tid), switches)
        }
        return result
    }

    public static func taskName(_ pid: Int32, _ tid: Int32) -> String {
        (read("/proc/\(pid)/task/\(tid)/comm") ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func isAlive(_ pid: Int32) -> Bool {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return false }
        let state = text[text.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
