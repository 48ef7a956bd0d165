import Foundation
import SoundscapeSystem
import TestSupport
import Varlink
#if canImport(Glibc)
import Glibc
#endif

/// GetStatus round trips, one every `intervalMs`, while the daemon does the
/// heaviest work a client can ask of it. The daemon answers the control socket
/// on one event-loop thread; anything that makes that thread wait (hashing a
/// long file, decoding ahead, SQLite, scanning a directory) shows here as a
/// slow probe. Targets (issue 13): max < 5 ms, p99 < 1 ms.
struct ControlUnderLoadResult: Codable, Sendable {
    var scenario: String
    var intervalMs: Double
    /// Round trips in milliseconds, from just before the call to its reply.
    var latencyMs: Summary
    /// The same without the probes that overlapped a machine stall: a moment
    /// when a real-time (SCHED_FIFO) canary thread, which preempts every
    /// normal thread, could not run for over 1 ms. Neither the daemon nor any
    /// other process can answer then (a non-preemptible kernel section, or the
    /// virtual CPU itself held up by its host).
    var latencyOutsideStallsMs: Summary
    /// Machine stalls the canary saw (count, and the longest in ms).
    var machineStalls: Int
    var longestMachineStallMs: Double
    /// How long the loading call itself took, in milliseconds (each repetition).
    var workMs: [Double]
}

extension ControlUnderLoadResult {
    init(scenario: String, intervalMs: Double, probed: ControlUnderLoad.Probed) {
        self.init(
            scenario: scenario, intervalMs: intervalMs, latencyMs: Summary(probed.latencies),
            latencyOutsideStallsMs: Summary(probed.outsideStalls), machineStalls: probed.stalls,
            longestMachineStallMs: probed.longestStallMs, workMs: probed.work)
    }
}

struct ControlUnderLoad {
    let daemon: DaemonUnderTest
    let graph: PipeWireGraph
    let options: Options

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }

    /// The daemon's user soundscape directory in the bench's graph.
    var userSoundscapes: URL {
        URL(fileURLWithPath: graph.environment["XDG_DATA_HOME"] ?? graph.directory.appendingPathComponent("data").path)
            .appendingPathComponent("soundscaped/soundscapes")
    }

    func run(returnTo soundscape: String) async throws -> [ControlUnderLoadResult] {
        try FileManager.default.createDirectory(at: userSoundscapes, withIntermediateDirectories: true)
        var results: [ControlUnderLoadResult] = []
        if options.longMinutes > 0 {
            results.append(try await coldLongPlay(returnTo: soundscape))
        }
        if options.listFiles > 0 {
            results.append(try await largeList())
        }
        return results
    }

    /// Play a long user soundscape nobody has played before: the daemon opens
    /// it (Ogg page walk and whole-file hash), decodes a ring ahead and starts
    /// building its PCM cache. The file's pages are dropped from the page cache
    /// first, so it is read from the disk.
    func coldLongPlay(returnTo soundscape: String) async throws -> ControlUnderLoadResult {
        let source = try LongSoundscape.file(minutes: options.longMinutes)
        let id = "bench-long-\(getpid())"
        let target = userSoundscapes.appendingPathComponent("\(id).opus")
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: source, to: target)
        LongSoundscape.dropFromPageCache(target.path)
        log("control under load: GetStatus every \(options.probeIntervalMs) ms during a cold Play of a \(options.longMinutes)-minute soundscape")
        let probed = try await probe(while: {
            let t0 = monoNanos()
            try await daemon.call("Play", ["soundscape": .string(id)], timeout: .seconds(60))
            // Keep probing while the first seconds play: the cache build and refills run then.
            try await Task.sleep(for: .seconds(3))
            return [secondsBetween(t0, monoNanos()) * 1000 - 3000]
        })
        try await daemon.call("Play", ["soundscape": .string(soundscape)], timeout: .seconds(30))
        try? FileManager.default.removeItem(at: target)
        return ControlUnderLoadResult(
            scenario: "cold Play of a \(options.longMinutes)-minute soundscape (+3 s playing)",
            intervalMs: options.probeIntervalMs, probed: probed)
    }

    /// `ListSoundscapes` over `listFiles` user files beside the built-in ones, five times.
    func largeList() async throws -> ControlUnderLoadResult {
        let original = try LongSoundscape.bundled()
        var made: [URL] = []
        for index in 0..<options.listFiles {
            let url = userSoundscapes.appendingPathComponent(String(format: "bench-list-%03d.opus", index))
            try? FileManager.default.removeItem(at: url)
            try FileManager.default.copyItem(at: original, to: url)
            made.append(url)
        }
        defer { for url in made { try? FileManager.default.removeItem(at: url) } }
        log("control under load: GetStatus every \(options.probeIntervalMs) ms during ListSoundscapes over \(options.listFiles) more files")
        let socket = daemon.socket
        let probed = try await probe(while: {
            // Raw calls on a thread: the replies (60 KB each) are read, not decoded, so the
            // bench's own work cannot take the CPU the probe and the daemon need.
            try await Self.onThread {
                let connection = try FramedSocket(path: socket)
                var times: [Double] = []
                for _ in 0..<5 {
                    let t0 = monoNanos()
                    try connection.call(method: "\(DaemonUnderTest.interface).ListSoundscapes")
                    times.append(secondsBetween(t0, monoNanos()) * 1000)
                }
                return times
            }
        })
        let count = try await daemon.call("ListSoundscapes")["soundscapes"]?.arrayValue?.count ?? 0
        return ControlUnderLoadResult(
            scenario: "ListSoundscapes ×5 over \(count) soundscapes",
            intervalMs: options.probeIntervalMs, probed: probed)
    }

    /// Runs `work` while a second connection sends GetStatus every
    /// `probeIntervalMs`; returns the probes' round trips (ms) from half a
    /// second before the work until it is done. The probe is a blocking socket
    /// on a thread of its own (a blocking `FramedSocket`), so the bench's executors
    /// and their work (decoding a long reply) cannot delay it.
    private func probe(while work: @escaping @Sendable () async throws -> [Double]) async throws -> Probed {
        let connection = try FramedSocket(path: daemon.socket)
        let interval = options.probeIntervalMs
        let method = "\(DaemonUnderTest.interface).GetStatus"
        // SOUNDSCAPE_BENCH_SLOW_PROBE_MS: print each probe slower than this, with its
        // CLOCK_MONOTONIC times, to line it up with `perf sched record -k CLOCK_MONOTONIC`.
        let slowProbeMs = ProcessInfo.processInfo.environment["SOUNDSCAPE_BENCH_SLOW_PROBE_MS"].flatMap(Double.init)
        let stop = ManagedAtomicFlag()
        let canaryOn = options.stallCanary
        let canary = ProbeThread { canaryOn ? Self.watchForStalls(until: stop) : [] }
        let prober = ProbeThread {
            var samples: [(UInt64, UInt64)] = []
            var next = monoNanos()
            while !stop.isSet {
                let t0 = monoNanos()
                try connection.call(method: method)
                let t1 = monoNanos()
                samples.append((t0, t1))
                if let slow = slowProbeMs, secondsBetween(t0, t1) * 1000 > slow {
                    FileHandle.standardError.write(Data("[bench] slow probe: \(t0) -> \(t1) (CLOCK_MONOTONIC ns)\n".utf8))
                }
                next += UInt64(interval * 1_000_000)
                let now = monoNanos()
                if next > now {
                    var pause = timespec(tv_sec: Int(next - now) / 1_000_000_000, tv_nsec: Int(next - now) % 1_000_000_000)
                    var left = timespec()
                    while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                } else {
                    next = now
                }
            }
            return samples
        }
        try await Task.sleep(for: .milliseconds(500))
        let workTimes: [Double]
        do {
            workTimes = try await work()
        } catch {
            stop.set()
            _ = try? await prober.value()
            _ = try? await canary.value()
            throw error
        }
        stop.set()
        let probes = try await prober.value()
        let stalls = try await canary.value()
        let outside = probes.filter { probe in !stalls.contains { $0.start < probe.1 && $0.end > probe.0 } }
        return Probed(
            latencies: probes.map { secondsBetween($0.0, $0.1) * 1000 },
            outsideStalls: outside.map { secondsBetween($0.0, $0.1) * 1000 },
            stalls: stalls.count,
            longestStallMs: stalls.map { secondsBetween($0.start, $0.end) * 1000 }.max() ?? 0,
            work: workTimes)
    }

    struct Probed {
        var latencies: [Double]
        var outsideStalls: [Double]
        var stalls: Int
        var longestStallMs: Double
        var work: [Double]
    }

    /// The canary: sleeps 1 ms at a time under SCHED_FIFO and notes each time it
    /// woke over 1 ms late, as [start, end) of the stall. Under SCHED_FIFO it
    /// preempts every normal thread (the daemon's, the bench's), so lateness
    /// is the machine's, not the daemon's. Without the privilege (not root,
    /// no RLIMIT_RTPRIO) it reports no stalls rather than guessing.
    static func watchForStalls(until stop: ManagedAtomicFlag) -> [(start: UInt64, end: UInt64)] {
        var parameters = sched_param(sched_priority: 10)
        guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 else { return [] }
        var stalls: [(start: UInt64, end: UInt64)] = []
        while !stop.isSet {
            let t0 = monoNanos()
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            _ = nanosleep(&pause, nil)
            let t1 = monoNanos()
            if t1 - t0 > 2_000_000 { stalls.append((t0 + 1_000_000, t1)) }
        }
        return stalls
    }

    /// Runs `body` on a thread of its own (blocking calls must not hold a cooperative thread).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await ProbeThread(body).value()
    }
}

/// A body run on a thread of its own; `value()` waits for its result.
final class ProbeThread<T: Sendable>: @unchecked Sendable {
    private let lock = NSCondition()
    private var result: Result<T, Error>?
    private var waiter: CheckedContinuation<T, Error>?

    init(_ body: @escaping @Sendable () throws -> T) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            lock.lock()
            if let waiter {
                self.waiter = nil
                lock.unlock()
                waiter.resume(with: outcome)
            } else {
                result = outcome
                lock.unlock()
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            if let result {
                lock.unlock()
                continuation.resume(with: result)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}

/// A flag one task sets and another polls.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// The long recording the cold-play scenario uses: pink noise encoded as a
/// user would have it (44 kb/s, 13 MB for 40 minutes), made once with sox and
/// opusenc and kept in the temporary directory for later runs.
enum LongSoundscape {
    static func file(minutes: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("soundscape-bench-pink-\(minutes)min.opus")
        if let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int,
            size > minutes * 200_000
        {
            return url
        }
        FileHandle.standardError.write(Data("[bench] encoding a \(minutes)-minute soundscape (once; kept at \(url.path))\n".utf8))
        let partial = url.appendingPathExtension("partial")
        try ChildProcess.run(
            [
                "sh", "-c",
                "sox -q -n -r 48000 -c 2 -b 16 -t wav - synth \(minutes * 60) pinknoise vol 0.3 | opusenc --quiet --bitrate 44 - \"$0\"",
                partial.path,
            ], timeout: .seconds(600)
        ).requireSuccess()
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: partial, to: url)
        return url
    }

    static func bundled() throws -> URL {
        ProductLocator.soundscapesDirectory.appendingPathComponent("rain.opus")
    }

    /// `POSIX_FADV_DONTNEED`: the file's clean pages leave the page cache, so the next read is cold.
    static func dropFromPageCache(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = fdatasync(descriptor)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
    }
}

extension FramedSocket {
    /// Sends `{"method": method}` and reads the reply, which it does not decode;
    /// returns its size in bytes, and throws when it is an error. From a thread of
    /// its own, what this times is the daemon's answer and the kernel's delivery,
    /// not the bench's executor hops (a Swift task resumed through a NIO thread waits
    /// for two more wake-ups, and on two cores those sat behind the bench's own
    /// decoding of a 60 KB list reply for up to 4.6 ms: `perf sched timehist`).
    @discardableResult
    fileprivate func call(method: String) throws -> Int {
        let reply = try call("{\"method\":\"\(method)\"}")
        // A successful reply starts with its parameters; an error names itself first or last.
        guard reply.starts(with: Array("{\"parameters\":".utf8)) else {
            throw HarnessError("\(method) failed: \(String(decoding: reply.prefix(200), as: UTF8.self))")
        }
        return reply.count
    }
}
