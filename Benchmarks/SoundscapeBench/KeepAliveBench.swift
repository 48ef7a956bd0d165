import Foundation
import NIOCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The keep-alive as a whole: the daemon playing with a signer whose health it
/// checks, plus every process its checks start. The signer is the igloo-server
/// stand-in (Tests/EndToEndTests/Fixtures/signers/igloo-server.py: `GET
/// /api/status` as igloo-server answers it), checked at the default interval three
/// ways, each a fresh daemon:
/// - no health check (the baseline);
/// - the built-in HTTP check, `signer-health-url` with `/health/isConnected == true`;
/// - the command docs/signer.md gave before it, `sh -c 'curl … | jq …'`.
/// CPU is the daemon's (schedstat, summed over its threads) plus what its reaped
/// children used (`cutime` + `cstime` of /proc/PID/stat: the check's processes, which
/// the daemon reaps; the signer and its lifeline watcher outlive the window), per
/// second, against pw-play's in the same run. The stand-in writes a line per request,
/// so the checks in each window are counted, not assumed. A check's CPU is what the
/// threads other than the data thread and the reaped children used beyond the
/// baseline's, per check (see `checkingCPUPerSecond`).
///
/// Then two closer looks at the HTTP check: its CPU per check, from a window of many
/// checks at a short interval against the baseline's CPU per second; and the daemon's
/// wake-ups in a window between two checks at the default interval, thread by thread
/// (the data thread's one per graph cycle aside, there should be none).
struct KeepAliveRow: Codable, Sendable {
    var name: String
    var command: String?
    var window: ProcessWindowResult
    /// CPU of the processes the daemon reaped during the window (its checks), s.
    var childrenCPUSeconds: Double
    var checks: Int
    var note: String?

    var cpuSeconds: Double { window.scheduledCPUSeconds + childrenCPUSeconds }
    var cpuPerSecond: Double { cpuSeconds / window.seconds }
    /// CPU off the real-time data thread, where every check runs (the event loop, the
    /// spawner, a probe's thread) and the playing does not, plus the reaped children's, per
    /// second: the data thread's copying varies by more between windows on a busy machine
    /// than a check costs, so a check's cost is told from this.
    var checkingCPUPerSecond: Double {
        (window.threads.filter { !$0.name.hasSuffix("-rt") }.map(\.cpuSeconds).reduce(0, +) + childrenCPUSeconds) / window.seconds
    }
}

struct KeepAliveResult: Codable, Sendable {
    var interval: Double
    var rows: [KeepAliveRow] = []
    /// The HTTP check at `fastInterval`: many checks in one window, for its CPU per check.
    var fast: KeepAliveRow?
    var fastInterval: Double
    /// The daemon with the HTTP check, between two checks: wake-ups per thread.
    var between: ProcessWindowResult?
    /// pw-play measured right before these windows (the players' table has another).
    var pwPlay: ProcessWindowResult?
    var notes: [String] = []
}

struct KeepAliveBench {
    let graph: PipeWireGraph
    let daemonPath: String
    let soundscape: String
    let extraArguments: [String]
    let seconds: Double
    let fastChecks: Int
    let group: any EventLoopGroup

    static let standIn = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/signers/igloo-server.py").path
    /// signer-health-interval's default, as `--print-settings` would say.
    static let interval = 10.0
    static let fastInterval = 0.05

    func run() async throws -> KeepAliveResult {
        var result = KeepAliveResult(interval: Self.interval, fastInterval: Self.fastInterval)
        let url = { (port: Int) in "http://127.0.0.1:\(port)/api/status" }
        result.rows.append(try await measure("no health check", check: { _ in [] }))
        result.rows.append(
            try await measure(
                "HTTP check", check: { ["--signer-health-url", url($0), "--signer-health-json", "/health/isConnected == true"] },
                between: { result.between = $0 }))
        if ExternalTools.path(of: "curl") != nil, ExternalTools.path(of: "jq") != nil {
            let command = { (port: Int) in "sh -c 'curl -fsS \(url(port)) | jq -e .health.isConnected'" }
            var row = try await measure("curl-and-jq command", check: { ["--signer-health-command", command($0)] })
            row.command = command(8002)
            result.rows.append(row)
        } else {
            result.notes.append("curl or jq is not installed: the command's row is left out")
        }
        if fastChecks > 0 {
            result.fast = try await measure(
                "HTTP check, \(fastChecks) checks", interval: Self.fastInterval,
                seconds: Double(fastChecks) * Self.fastInterval,
                check: { ["--signer-health-url", url($0), "--signer-health-json", "/health/isConnected == true"] })
        }
        return result
    }

    /// A fresh daemon with the stand-in as its signer and `check`'s arguments, playing;
    /// measured over `seconds` from just after a check.
    private func measure(
        _ name: String, interval: Double = Self.interval, seconds: Double? = nil,
        check: (Int) -> [String], between: ((ProcessWindowResult) -> Void)? = nil
    ) async throws -> KeepAliveRow {
        let port = try freePort()
        let requests = graph.directory.appendingPathComponent("keepalive-requests-\(port)")
        let signer = "/usr/bin/python3 \(Self.standIn) --port \(port) --requests \(requests.path)"
        let daemon = DaemonUnderTest(
            graph: graph, executable: daemonPath,
            extraArguments: extraArguments + ["--signer-command", signer, "--signer-health-interval", "\(interval)"] + check(port),
            group: group)
        log("keep-alive: \(name), \(signer)")
        do {
            let row = try await measure(
                name, daemon: daemon, requests: requests, interval: interval, seconds: seconds ?? self.seconds, checked: !check(port).isEmpty,
                between: between)
            await daemon.stop()
            return row
        } catch {
            await daemon.stop()
            throw error
        }
    }

    private func measure(
        _ name: String, daemon: DaemonUnderTest, requests: URL, interval: Double, seconds: Double, checked: Bool,
        between: ((ProcessWindowResult) -> Void)?
    ) async throws -> KeepAliveRow {
        try await daemon.start()
        try await daemon.call("SetVolume", ["volume": 100])
        try await daemon.call("Play", ["soundscape": .string(soundscape)])
        guard let pid = daemon.pid else { throw HarnessError("the daemon is not running") }
        // Warm: past the first check (one interval after the signer started) and the PCM cache's build.
        if checked {
            try await waitForRequests(requests, count: 1, timeout: interval + 10)
            try await Task.sleep(for: .seconds(min(interval / 2, 1)))
        } else {
            try await Task.sleep(for: .seconds(3))
        }
        let window = ProcessWindow()
        let childrenBefore = ProcFS.childrenTicks(pid) ?? 0
        let start = monoNanos()
        window.begin([pid])
        try await Task.sleep(for: .seconds(seconds))
        let measured = window.end()[0]
        let end = monoNanos()
        let childrenAfter = ProcFS.childrenTicks(pid) ?? 0
        let checks = requestTimes(requests).filter { $0 >= start && $0 <= end }.count
        var row = KeepAliveRow(
            name: name, window: measured, childrenCPUSeconds: Double(childrenAfter &- childrenBefore) / ProcFS.clockTicks,
            checks: checks)
        if let between {
            // From half a second after a check to 1.5 s before the next: nothing but the data thread should wake.
            let seen = requestTimes(requests).count
            try await waitForRequests(requests, count: seen + 1, timeout: interval + 5)
            try await Task.sleep(for: .seconds(0.5))
            let quiet = ProcessWindow()
            quiet.begin([pid])
            try await Task.sleep(for: .seconds(interval - 2))
            between(quiet.end()[0])
            if requestTimes(requests).count != seen + 1 { row.note = "a check fell inside the window between checks" }
        }
        return row
    }

    /// When the stand-in answered, on CLOCK_MONOTONIC (Python's time.monotonic), in ns.
    private func requestTimes(_ file: URL) -> [UInt64] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { Double($0).map { UInt64($0 * 1e9) } }
    }

    private func waitForRequests(_ file: URL, count: Int, timeout: Double) async throws {
        let deadline = monoNanos() + UInt64(timeout * 1e9)
        while requestTimes(file).count < count {
            guard monoNanos() < deadline else {
                throw HarnessError("the stand-in got no health check within \(timeout) s\n\(graph.logTail(lines: 20))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw HarnessError("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension Render {
    /// The keep-alive as a whole, per second, against pw-play's CPU per second in the same run.
    static func keepAliveTable(_ result: KeepAliveResult, pwPlay: ProcessWindowResult?) -> String {
        let pwPerSecond = pwPlay.map { $0.scheduledCPUSeconds / $0.seconds }
        let baseline = result.rows.first
        func perCheck(_ row: KeepAliveRow) -> String {
            guard let baseline, row.name != baseline.name, row.checks > 0 else { return "–" }
            return f((row.checkingCPUPerSecond - baseline.checkingCPUPerSecond) * row.window.seconds / Double(row.checks) * 1000, 2)
        }
        var rows = result.rows.map { row in
            [
                row.name, f(row.window.seconds, 0), "\(row.checks)", f(row.window.scheduledCPUSeconds * 1000 / row.window.seconds, 2),
                f(row.childrenCPUSeconds * 1000 / row.window.seconds, 2), f(row.cpuPerSecond * 1000, 2),
                ratio(row.cpuPerSecond, pwPerSecond), perCheck(row), f(row.window.voluntarySwitchesPerSecond, 2),
            ]
        }
        if let fast = result.fast {
            rows.append([
                fast.name + " (\(f(result.fastInterval, 2)) s apart)", f(fast.window.seconds, 0), "\(fast.checks)",
                f(fast.window.scheduledCPUSeconds * 1000 / fast.window.seconds, 2), f(fast.childrenCPUSeconds * 1000 / fast.window.seconds, 2),
                f(fast.cpuPerSecond * 1000, 2), "–", perCheck(fast), f(fast.window.voluntarySwitchesPerSecond, 2),
            ])
        }
        var out = String(
            format: "\n## The keep-alive as a whole (the daemon and its checks' processes; an igloo-server stand-in signs; a check every %.0f s)\n\n",
            result.interval)
        out +=
            table(
                [
                    "keep-alive", "window s", "checks", "daemon CPU ms/s", "reaped children ms/s", "whole ms/s", "×pw-play",
                    "CPU per check ms", "daemon wakeups/s",
                ], rows) + "\n"
        out +=
            "pw-play " + (result.pwPlay != nil ? "right before these windows: " : "in the same run: ")
            + (pwPerSecond.map { f($0 * 1000, 2) + " ms/s (schedstat)" } ?? "not measured") + "\n"
        out += "CPU per check = (CPU off the data thread + reaped children, ms/s, less the no-check row's) × window / checks\n"
        out += "(the data thread plays and never checks; its share varies between windows on a busy machine by more than a check costs).\n"
        if let between = result.between {
            let others = between.threads.filter { $0.voluntaryPerSecond > 0 && !$0.name.hasSuffix("-rt") }
            out += String(
                format: "Between two HTTP checks (%.1f s): %.2f wakeups/s in all; other threads than the data thread: %@\n",
                between.seconds, between.voluntarySwitchesPerSecond,
                others.isEmpty
                    ? "none woke" : others.map { String(format: "%@ %.2f/s", $0.name, $0.voluntaryPerSecond) }.joined(separator: ", "))
        }
        for note in result.notes + result.rows.compactMap(\.note) { out += "  note: \(note)\n" }
        return out
    }
}
