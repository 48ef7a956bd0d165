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
/// The two rows the target compares (no check and the HTTP check) are measured in
/// rounds, each with a pw-play window of its own right before it and the two rows in
/// alternating order (ABBA), and the table takes medians over the rounds: a fresh
/// daemon's data thread costs 0.9–1.9 ms/s from one window to the next on a shared
/// machine (kernel work per graph cycle, not ours), more than a check costs in a
/// second, so one window each cannot tell 0.28× from 0.32×. The curl-and-jq row,
/// twenty times dearer, is measured in the first round only.
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

/// One round: pw-play, then the rows, back to back.
struct KeepAliveRound: Codable, Sendable {
    /// pw-play measured right before this round's rows.
    var pwPlay: ProcessWindowResult?
    var rows: [KeepAliveRow] = []

    var pwPlayPerSecond: Double? { pwPlay.map { $0.scheduledCPUSeconds / $0.seconds } }
    /// pw-play's threads but its main one, per second: its data thread, which does per graph
    /// cycle what soundscaped's does (the decoding is on the main thread), so the floor that
    /// any client the graph schedules every cycle pays on this machine.
    var pwPlayDataThreadPerSecond: Double? {
        pwPlay.map { window in window.threads.filter { $0.tid != window.pid }.map(\.cpuSeconds).reduce(0, +) / window.seconds }
    }
}

struct KeepAliveResult: Codable, Sendable {
    var interval: Double
    var rounds: [KeepAliveRound] = []
    /// The HTTP check at `fastInterval`: many checks in one window, for its CPU per check.
    var fast: KeepAliveRow?
    var fastInterval: Double
    /// The daemon with the HTTP check, between two checks: wake-ups per thread.
    var between: ProcessWindowResult?
    var notes: [String] = []

    /// The rows' names in the order the first round measured them.
    var rowNames: [String] {
        var names: [String] = []
        for round in rounds { for row in round.rows where !names.contains(row.name) { names.append(row.name) } }
        return names
    }
}

struct KeepAliveBench {
    let graph: PipeWireGraph
    let daemonPath: String
    let soundscape: String
    let extraArguments: [String]
    let seconds: Double
    let fastChecks: Int
    let rounds: Int
    let group: any EventLoopGroup
    /// Measures pw-play on the same graph; nil when it cannot run.
    let pwPlay: () async -> ProcessWindowResult?

    static let standIn = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/signers/igloo-server.py").path
    /// signer-health-interval's default, as `--print-settings` would say.
    static let interval = 10.0
    static let fastInterval = 0.05

    static let noCheck = "no health check"
    static let httpCheck = "HTTP check"

    private static func url(_ port: Int) -> String { "http://127.0.0.1:\(port)/api/status" }
    /// The built-in HTTP check's arguments, against the stand-in on `port`.
    private static func http(_ port: Int) -> [String] {
        ["--signer-health-url", url(port), "--signer-health-json", "/health/isConnected == true"]
    }

    func run() async throws -> KeepAliveResult {
        var result = KeepAliveResult(interval: Self.interval, fastInterval: Self.fastInterval)
        let url = Self.url
        let http = Self.http
        let count = max(rounds, 1)
        for index in 0..<count {
            log("keep-alive: round \(index + 1) of \(count)")
            var round = KeepAliveRound(pwPlay: await pwPlay())
            let unchecked = { try await measure(Self.noCheck, check: { _ in [] }) }
            let checked = {
                try await measure(Self.httpCheck, check: http, between: index == 0 ? { result.between = $0 } : nil)
            }
            // ABBA: the order alternates, so a drift in the machine's load over a run weighs on both rows alike.
            round.rows = index % 2 == 0 ? [try await unchecked(), try await checked()] : [try await checked(), try await unchecked()]
            if index == 0 {
                if ExternalTools.path(of: "curl") != nil, ExternalTools.path(of: "jq") != nil {
                    let command = { (port: Int) in "sh -c 'curl -fsS \(url(port)) | jq -e .health.isConnected'" }
                    var row = try await measure("curl-and-jq command", check: { ["--signer-health-command", command($0)] })
                    row.command = command(8002)
                    round.rows.append(row)
                } else {
                    result.notes.append("curl or jq is not installed: the command's row is left out")
                }
            }
            result.rounds.append(round)
        }
        if fastChecks > 0 { result.fast = try await fastRow() }
        return result
    }

    /// The HTTP check at `fastInterval`, over `fastChecks` checks.
    private func fastRow() async throws -> KeepAliveRow {
        try await measure(
            "HTTP check, \(fastChecks) checks", interval: Self.fastInterval, seconds: Double(fastChecks) * Self.fastInterval,
            check: Self.http)
    }

    /// What CI's gate (`soundscape-bench health-cost`) measures: a no-check window of
    /// `seconds`, then the HTTP check's `fastChecks` checks; `perCheck` divides.
    func perCheckCost() async throws -> (baseline: KeepAliveRow, fast: KeepAliveRow) {
        let baseline = try await measure(Self.noCheck, check: { _ in [] })
        return (baseline, try await fastRow())
    }

    /// A row's CPU per check, in s, against a no-check row: (CPU off the data thread plus
    /// the reaped children's, per second, less the baseline's) × window / checks.
    static func perCheck(_ row: KeepAliveRow, baseline: KeepAliveRow) -> Double? {
        guard row.name != noCheck, row.checks > 0 else { return nil }
        return (row.checkingCPUPerSecond - baseline.checkingCPUPerSecond) * row.window.seconds / Double(row.checks)
    }

    /// A fresh daemon with the stand-in as its signer and `check`'s arguments, playing;
    /// measured over `seconds` from just after a check.
    private func measure(
        _ name: String, interval: Double = Self.interval, seconds: Double? = nil,
        check: (Int) -> [String], between: ((ProcessWindowResult) -> Void)? = nil
    ) async throws -> KeepAliveRow {
        let port = try LocalPort.free()
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
        // Warm: a second past the first check (one interval after the signer started), and the PCM cache's build.
        if checked {
            try await waitForRequests(requests, count: 1, timeout: interval + 10)
            try await Task.sleep(for: .seconds(1))
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
}

extension Render {
    /// The keep-alive as a whole, per second, against pw-play's CPU per second in the same
    /// round: medians over the rounds, with their range where there are several.
    static func keepAliveTable(_ result: KeepAliveResult) -> String {
        func median(_ values: [Double]) -> Double? { values.isEmpty ? nil : Summary(values).p50 }
        func spread(_ values: [Double], _ text: (Double) -> String) -> String {
            guard let middle = median(values) else { return "–" }
            guard values.count > 1, let low = values.min(), let high = values.max() else { return text(middle) }
            return "\(text(middle)) (\(text(low))–\(text(high)))"
        }
        func times(_ value: Double) -> String { String(format: "%.2f×", value) }
        func ms(_ value: Double) -> String { f(value * 1000, 2) }
        /// A row's CPU per check, in s, against the same round's no-check row.
        func perCheck(_ row: KeepAliveRow, in round: KeepAliveRound) -> Double? {
            guard let baseline = round.rows.first(where: { $0.name == KeepAliveBench.noCheck }) else { return nil }
            return KeepAliveBench.perCheck(row, baseline: baseline)
        }
        /// Round by round, the `name` row's whole CPU per second over `base` of the same round.
        func ratios(_ name: String, to base: (KeepAliveRound) -> Double?) -> [Double] {
            result.rounds.compactMap { round in
                guard let base = base(round), base > 0, let row = round.rows.first(where: { $0.name == name }) else { return nil }
                return row.cpuPerSecond / base
            }
        }
        var rows = result.rowNames.map { name -> [String] in
            let measured = result.rounds.compactMap { round in round.rows.first { $0.name == name }.map { (round, $0) } }
            return [
                name, "\(measured.count) × " + f(measured.first?.1.window.seconds, 0), "\(measured.map(\.1.checks).reduce(0, +))",
                ms(median(measured.map { $0.1.window.scheduledCPUSeconds / $0.1.window.seconds }) ?? .nan),
                ms(median(measured.map { $0.1.childrenCPUSeconds / $0.1.window.seconds }) ?? .nan),
                spread(measured.map(\.1.cpuPerSecond), ms), spread(ratios(name, to: \.pwPlayPerSecond), times),
                spread(measured.compactMap { perCheck($0.1, in: $0.0) }, ms),
                f(median(measured.map(\.1.window.voluntarySwitchesPerSecond)), 2),
            ]
        }
        if let fast = result.fast, let first = result.rounds.first {
            rows.append([
                fast.name + " (\(f(result.fastInterval, 2)) s apart)", "1 × " + f(fast.window.seconds, 0), "\(fast.checks)",
                ms(fast.window.scheduledCPUSeconds / fast.window.seconds), ms(fast.childrenCPUSeconds / fast.window.seconds),
                ms(fast.cpuPerSecond), "–", perCheck(fast, in: first).map(ms) ?? "–", f(fast.window.voluntarySwitchesPerSecond, 2),
            ])
        }
        var out = String(
            format: "\n## The keep-alive as a whole (the daemon and its checks' processes; an igloo-server stand-in signs; a check every %.0f s)\n\n",
            result.interval)
        out +=
            table(
                [
                    "keep-alive", "windows × s", "checks", "daemon CPU ms/s", "reaped children ms/s", "whole ms/s", "×pw-play",
                    "CPU per check ms", "daemon wakeups/s",
                ], rows) + "\n"
        let pw = result.rounds.compactMap(\.pwPlayPerSecond)
        out += "pw-play, right before each round: " + (pw.isEmpty ? "not measured" : pw.map(ms).joined(separator: ", ") + " ms/s (schedstat)") + "\n"
        let floor = result.rounds.compactMap(\.pwPlayDataThreadPerSecond)
        if !floor.isEmpty {
            let name = KeepAliveBench.httpCheck
            let overFloor = ratios(name, to: \.pwPlayDataThreadPerSecond)
            out +=
                "pw-play's data thread alone (one wake-up per graph cycle, as soundscaped's): " + floor.map(ms).joined(separator: ", ")
                + " ms/s; the keep-alive with the \(name) costs " + spread(overFloor, times) + " of it\n"
        }
        out += "Medians over \(result.rounds.count) round(s), range in brackets; ×pw-play is taken round by round against that round's pw-play.\n"
        out += "CPU per check = (CPU off the data thread + reaped children, ms/s, less the same round's no-check row's) × window / checks\n"
        out += "(the data thread plays and never checks; its share varies between windows on a busy machine by more than a check costs).\n"
        if let between = result.between {
            let others = between.threads.filter { $0.voluntaryPerSecond > 0 && !$0.name.hasSuffix("-rt") }
            out += String(
                format: "Between two HTTP checks (%.1f s): %.2f wakeups/s in all; other threads than the data thread: %@\n",
                between.seconds, between.voluntarySwitchesPerSecond,
                others.isEmpty
                    ? "none woke" : others.map { String(format: "%@ %.2f/s", $0.name, $0.voluntaryPerSecond) }.joined(separator: ", "))
        }
        for note in result.notes + result.rounds.flatMap(\.rows).compactMap(\.note) { out += "  note: \(note)\n" }
        return out
    }
}
