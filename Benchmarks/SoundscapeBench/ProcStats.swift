import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// CLOCK_MONOTONIC in nanoseconds: the one clock every timestamp of the bench uses.
func monoNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func secondsBetween(_ a: UInt64, _ b: UInt64) -> Double {
    Double(Int64(bitPattern: b &- a)) / 1e9
}

/// The CPUs this process may run on, as the kernel lists them (`Cpus_allowed_list` of
/// /proc/self/status: "0-1", or "0" under `taskset -c 0`, which every process it starts
/// inherits); nil when it cannot tell.
func processAllowedCPUs() -> String? {
    ProcFS.read("/proc/self/status")?.split(separator: "\n")
        .first { $0.hasPrefix("Cpus_allowed_list:") }
        .map { $0.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces) }
}

/// Per-thread counters seen over a window.
struct ThreadCounters {
    var name: String
    var firstVoluntary: UInt64
    var lastVoluntary: UInt64
    var firstInvoluntary: UInt64
    var lastInvoluntary: UInt64
    var firstRuntime: UInt64
    var lastRuntime: UInt64
}

struct ThreadWakeups: Codable, Sendable {
    var tid: Int32
    var name: String
    var voluntaryPerSecond: Double
    var cpuSeconds: Double
}

/// What one process did over a window.
struct ProcessWindowResult: Codable, Sendable {
    var pid: Int32
    var seconds: Double
    /// utime+stime delta from /proc/PID/stat (clock-tick resolution, 10 ms).
    var cpuSeconds: Double
    var userSeconds: Double
    var systemSeconds: Double
    /// Sum over threads of the schedstat run time delta (ns resolution; threads
    /// that exited between two samples lose their last partial interval).
    var scheduledCPUSeconds: Double
    /// Sum over all threads of voluntary_ctxt_switches deltas, per second.
    var voluntarySwitchesPerSecond: Double
    var involuntarySwitchesPerSecond: Double
    /// VmHWM at the end of the window (peak RSS over the process's life), MB.
    var peakRSSMB: Double
    /// Largest VmRSS sampled during the window, MB.
    var maxSampledRSSMB: Double
    var threadsAtEnd: Int
    var maxThreads: Int
    var exitedDuringWindow: Bool
    /// Threads by wake-ups, busiest first.
    var threads: [ThreadWakeups]
}

/// Samples processes from /proc over a window: counters at the start and end,
/// and every `interval` in between (RSS, thread count, and per-thread context
/// switches so threads that come and go are accounted for).
final class ProcessWindow: @unchecked Sendable {
    private struct Tracked {
        var pid: Int32
        var startStat: (utime: UInt64, stime: UInt64, threads: Int)
        var lastStat: (utime: UInt64, stime: UInt64, threads: Int)
        var threads: [Int32: ThreadCounters] = [:]
        var maxRSSKB: UInt64 = 0
        var hwmKB: UInt64 = 0
        var maxThreads = 0
        var exited = false
    }

    private let lock = NSLock()
    private var tracked: [Tracked] = []
    private var startNanos: UInt64 = 0
    private var stopRequested = false
    private var thread: Thread?
    private let interval: Double

    init(interval: Double = 0.2) {
        self.interval = interval
    }

    /// Takes the start snapshot of every pid and starts the sampling thread.
    func begin(_ pids: [Int32]) {
        lock.lock()
        tracked = pids.map { pid in
            let st = ProcFS.stat(pid) ?? (0, 0, 0)
            return Tracked(pid: pid, startStat: st, lastStat: st)
        }
        startNanos = monoNanos()
        for i in tracked.indices { sampleLocked(i, initial: true) }
        lock.unlock()
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: interval)
                lock.lock()
                if stopRequested {
                    lock.unlock()
                    return
                }
                for i in tracked.indices { sampleLocked(i, initial: false) }
                lock.unlock()
            }
        }
        thread.name = "bench-proc-sampler"
        self.thread = thread
        thread.start()
    }

    private func sampleLocked(_ i: Int, initial: Bool) {
        let pid = tracked[i].pid
        guard !tracked[i].exited else { return }
        guard let st = ProcFS.stat(pid), ProcFS.isAlive(pid) else {
            tracked[i].exited = true
            return
        }
        tracked[i].lastStat = st
        let status = ProcFS.statusFields("/proc/\(pid)/status")
        tracked[i].maxRSSKB = max(tracked[i].maxRSSKB, status["VmRSS"] ?? 0)
        tracked[i].hwmKB = max(tracked[i].hwmKB, status["VmHWM"] ?? 0)
        tracked[i].maxThreads = max(tracked[i].maxThreads, status["Threads"].map(Int.init) ?? st.threads)
        for tid in ProcFS.taskIDs(pid) {
            let ts = ProcFS.statusFields("/proc/\(pid)/task/\(tid)/status")
            guard let v = ts["voluntary_ctxt_switches"], let n = ts["nonvoluntary_ctxt_switches"] else { continue }
            let rt = ProcFS.taskRuntime(pid, tid) ?? 0
            if var c = tracked[i].threads[tid] {
                c.lastVoluntary = v
                c.lastInvoluntary = n
                c.lastRuntime = rt
                tracked[i].threads[tid] = c
            } else {
                // A thread first seen after the start was born inside the window: count from zero.
                tracked[i].threads[tid] = ThreadCounters(
                    name: ProcFS.taskName(pid, tid),
                    firstVoluntary: initial ? v : 0, lastVoluntary: v,
                    firstInvoluntary: initial ? n : 0, lastInvoluntary: n,
                    firstRuntime: initial ? rt : 0, lastRuntime: rt)
            }
        }
    }

    /// Takes the end snapshot, stops the sampling thread and returns one result per pid.
    func end() -> [ProcessWindowResult] {
        lock.lock()
        for i in tracked.indices { sampleLocked(i, initial: false) }
        let seconds = secondsBetween(startNanos, monoNanos())
        stopRequested = true
        let snapshot = tracked
        lock.unlock()
        return snapshot.map { t in
            let user = Double(t.lastStat.utime &- t.startStat.utime) / ProcFS.clockTicks
            let system = Double(t.lastStat.stime &- t.startStat.stime) / ProcFS.clockTicks
            var voluntary: UInt64 = 0
            var involuntary: UInt64 = 0
            var runtime: UInt64 = 0
            var perThread: [ThreadWakeups] = []
            for (tid, c) in t.threads {
                let v = c.lastVoluntary &- c.firstVoluntary
                let r = c.lastRuntime &- c.firstRuntime
                voluntary += v
                involuntary += c.lastInvoluntary &- c.firstInvoluntary
                runtime += r
                perThread.append(
                    ThreadWakeups(
                        tid: tid, name: c.name, voluntaryPerSecond: Double(v) / seconds, cpuSeconds: Double(r) / 1e9))
            }
            perThread.sort { $0.voluntaryPerSecond > $1.voluntaryPerSecond }
            return ProcessWindowResult(
                pid: t.pid, seconds: seconds, cpuSeconds: user + system, userSeconds: user, systemSeconds: system,
                scheduledCPUSeconds: Double(runtime) / 1e9,
                voluntarySwitchesPerSecond: Double(voluntary) / seconds,
                involuntarySwitchesPerSecond: Double(involuntary) / seconds,
                peakRSSMB: Double(t.hwmKB) / 1024, maxSampledRSSMB: Double(t.maxRSSKB) / 1024,
                threadsAtEnd: t.lastStat.threads, maxThreads: t.maxThreads, exitedDuringWindow: t.exited,
                threads: perThread)
        }
    }
}
