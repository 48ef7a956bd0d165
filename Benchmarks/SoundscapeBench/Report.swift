import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Order statistics of a sample (nearest-rank percentiles).
struct Summary: Codable, Sendable {
    var count: Int
    var min: Double
    var p50: Double
    var p99: Double
    var max: Double
    var mean: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        func rank(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = Swift.max(0, Swift.min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))
            return sorted[index]
        }
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
        p50 = rank(0.5)
        p99 = rank(0.99)
        mean = sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count)
    }
}

struct EnvironmentSummary: Codable, Sendable {
    var cpuModel: String
    var cpus: Int
    var kernel: String
    var os: String
    var pipewire: String
    var settings: [String: String]
    var mpv: String?
    var gstreamer: String?
    var file: String
    var fileSeconds: Double?

    /// The CPU's model name, as /proc/cpuinfo has it.
    static func cpuModel() -> String {
        (ProcFS.read("/proc/cpuinfo") ?? "").split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    static func collect(graph: PipeWireGraph, file: String, fileSeconds: Double?) -> EnvironmentSummary {
        let model = cpuModel()
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let osRelease = ProcFS.read("/etc/os-release") ?? ""
        let os =
            osRelease.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "unknown"
        let pipewire =
            (try? graph.run(["pipewire", "--version"]))?.stdout
            .split(separator: "\n").first { $0.hasPrefix("Linked with") }.map(String.init) ?? "unknown"
        var settings: [String: String] = [:]
        if let out = try? graph.run(["pw-metadata", "-n", "settings"]).stdout {
            // update: id:0 key:'clock.quantum' value:'1024' type:''
            for line in out.split(separator: "\n") {
                guard let k = line.range(of: "key:'"), let kEnd = line[k.upperBound...].firstIndex(of: "'"),
                    let v = line.range(of: "value:'"), let vEnd = line[v.upperBound...].firstIndex(of: "'")
                else { continue }
                settings[String(line[k.upperBound..<kEnd])] = String(line[v.upperBound..<vEnd])
            }
        }
        func firstLine(_ args: [String]) -> String? {
            guard ExternalTools.path(of: args[0]) != nil, let r = try? graph.run(args), r.succeeded else { return nil }
            return r.stdout.split(separator: "\n").first.map(String.init)
        }
        return EnvironmentSummary(
            cpuModel: model, cpus: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), kernel: kernel, os: os,
            pipewire: pipewire, settings: settings,
            mpv: firstLine(["mpv", "--version"]).map { $0.split(separator: " ").prefix(2).joined(separator: " ") },
            gstreamer: firstLine(["gst-launch-1.0", "--version"]),
            file: file, fileSeconds: fileSeconds)
    }
}

struct BenchReport: Codable, Sendable {
    var commandLine: [String]
    var date: String
    var environment: EnvironmentSummary?
    var options: Options
    var players: [PlayerRow] = []
    var controlLatency: [ControlLatencyResult] = []
    var controlUnderLoad: [ControlUnderLoadResult] = []
    var fanOut: [FanOutResult] = []
    var fanOutErrors: [String] = []
    var playToFirstAudio: [FirstAudioTrial] = []
    var startToAudible: StartToAudibleResult?
    var volumeOff: VolumeOffResult?
    var switches: [SwitchTrial] = []
    var idle: IdleResult?
    var companion: CompanionResult?
    var keepAlive: KeepAliveResult?
    var errors: [String] = []
}

/// Plain-text and Markdown rendering of the report.
enum Render {
    static func f(_ value: Double?, _ digits: Int = 2) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: "%.\(digits)f", value)
    }

    static func ratio(_ value: Double?, _ base: Double?) -> String {
        guard let value, let base, base > 0, value.isFinite else { return "–" }
        return String(format: "%.2f×", value / base)
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            "| "
                + cells.enumerated().map { i, c in c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    static func environment(_ report: BenchReport) -> String {
        var out = "soundscape-bench — \(report.date)\n"
        out += "command: \(report.commandLine.joined(separator: " "))\n"
        guard let e = report.environment else { return out }
        out += "CPU: \(e.cpuModel) × \(e.cpus)\n"
        out += "kernel: \(e.kernel); OS: \(e.os)\n"
        out += "PipeWire: \(e.pipewire) (private graph: dbus-daemon + pipewire + wireplumber, one null sink)\n"
        let keys = ["clock.rate", "clock.quantum", "clock.min-quantum", "clock.max-quantum", "clock.force-quantum", "clock.force-rate"]
        out += "settings: " + keys.map { "\($0)=\(e.settings[$0] ?? "?")" }.joined(separator: ", ") + "\n"
        out +=
            "players: \(e.mpv ?? "mpv not installed"); "
            + "GStreamer \(e.gstreamer ?? "not installed")\n"
        out +=
            "file: \(e.file) (\(f(e.fileSeconds, 1)) s); window \(f(report.options.seconds, 0)) s after a \(f(report.options.warmup, 0)) s warm-up\n"
        return out
    }

    static func players(_ rows: [PlayerRow]) -> String {
        let base = rows.first { $0.name == "pw-play" && $0.status == "ok" }
        let header = [
            "player", "CPU s", "×pw-play", "wakeups/s", "×pw-play", "peak RSS MB", "threads",
            "pipewire CPU s", "×pw-play", "level dBFS", "quantum",
        ]
        let cells = rows.map { row -> [String] in
            guard row.status == "ok", let p = row.process, let pw = row.pipewire else {
                return [row.name, row.status] + Array(repeating: "–", count: header.count - 2)
            }
            var level = f(row.levelDBFS, 1)
            if row.silent == true { level += " SILENT" }
            return [
                row.name, f(p.cpuSeconds), ratio(p.cpuSeconds, base?.process?.cpuSeconds),
                f(p.voluntarySwitchesPerSecond, 1), ratio(p.voluntarySwitchesPerSecond, base?.process?.voluntarySwitchesPerSecond),
                f(p.peakRSSMB, 1), "\(p.maxThreads)",
                f(pw.cpuSeconds), ratio(pw.cpuSeconds, base?.pipewire?.cpuSeconds),
                level, row.quantumFrames.map(String.init) ?? "–",
            ]
        }
        return table(header, cells)
    }

    static func startToAudible(_ start: StartToAudibleResult, audibleDB: Double) -> String {
        var out =
            "Start → audible, soundscaped restarted after a SIGKILL (its saved session resumes) beside pw-play spawned on the same file, alternately (ms from the spawn to the recorder's receipt of the cycle carrying it):\n\n"
        func arrival(_ a: AudioArrival?) -> String {
            guard let a else { return "–" }
            return "\(f(a.ms, 1)) (prev. cycle \(f(a.previousWriteMs, 1)))"
        }
        let players = ["soundscaped", "pw-play"]
        var rows: [[String]] = []
        let count = players.map { p in start.trials.filter { $0.player == p }.count }.max() ?? 0
        for index in 0..<count {
            var row = ["\(index + 1)"]
            for player in players {
                let trial = start.trials.filter { $0.player == player }.dropFirst(index).first
                row += [arrival(trial?.audible), f(trial?.firstSound?.ms, 1)]
            }
            rows.append(row)
        }
        for (name, pick) in [("median", \Summary.p50), ("min", \Summary.min), ("max", \Summary.max)] {
            rows.append([name, f(start.soundscapedAudibleMs[keyPath: pick], 1), "", f(start.pwPlayAudibleMs[keyPath: pick], 1), ""])
        }
        out += table(["trial", "soundscaped audible (≥ \(f(audibleDB, 0)) dBFS)", "first sound", "pw-play audible", "first sound"], rows) + "\n"
        out += "  soundscaped / pw-play, medians: \(start.ratio.map { String(format: "%.2f×", $0) } ?? "–")\n"
        let notes = start.trials.flatMap { trial in trial.notes.map { "\(trial.player): \($0)" } }
        if !notes.isEmpty { out += "  notes: " + notes.joined(separator: "; ") + "\n" }
        return out + "\n"
    }

    static func volumeOff(_ off: VolumeOffResult) -> String {
        var out = String(
            format:
                "Volume off (SetVolume 0 while playing): state %@ (interruptions %@, isPlaying %@, wantsPlaying %@); the sink suspended %.1f s after it (WirePlumber's idle timeout) and was %@ at the end of the window\n",
            off.state, off.interruptions.joined(separator: ","), off.isPlaying.map { "\($0)" } ?? "?",
            off.wantsPlaying.map { "\($0)" } ?? "?", off.suspendedAfterSeconds, off.sinkStateMuted)
        out +=
            table(
                ["soundscaped", "window s", "wakeups/s", "CPU s (schedstat)", "sink"],
                [
                    [
                        "playing", f(off.playing.seconds, 1), f(off.playing.voluntarySwitchesPerSecond, 2),
                        f(off.playing.scheduledCPUSeconds, 4), off.sinkStateWhilePlaying,
                    ],
                    [
                        "volume off", f(off.muted.seconds, 1), f(off.muted.voluntarySwitchesPerSecond, 2),
                        f(off.muted.scheduledCPUSeconds, 4), off.sinkStateMuted,
                    ],
                ]) + "\n"
        let busy = off.muted.threads.filter { $0.voluntaryPerSecond > 0 }.prefix(5)
        if !busy.isEmpty {
            out +=
                "  waking threads at volume off: "
                + busy.map { String(format: "%@ %.2f/s", $0.name, $0.voluntaryPerSecond) }
                .joined(separator: ", ") + "\n"
        }
        return out + "\n"
    }

    static func full(_ report: BenchReport) -> String {
        var out = environment(report) + "\n"
        out += "## Players, same file, one after another (\(f(report.options.seconds, 0)) s window each)\n\n"
        out += players(report.players) + "\n\n"
        out += "CPU s = utime+stime (/proc/PID/stat, 10 ms ticks); wakeups/s = voluntary context switches summed over all threads;\n"
        out += "peak RSS = VmHWM; threads = most seen; pipewire CPU s = the graph's server over the same window;\n"
        out += "level = RMS of 1 s recorded from the sink right after the window; quantum = frames per graph cycle seen by that recorder.\n"
        let base = report.players.first { $0.name == "pw-play" && $0.status == "ok" }
        let precise = report.players.compactMap { row -> [String]? in
            guard row.status == "ok", let p = row.process, let pw = row.pipewire else { return nil }
            return [
                row.name, f(p.scheduledCPUSeconds, 3), ratio(p.scheduledCPUSeconds, base?.process?.scheduledCPUSeconds),
                f(pw.scheduledCPUSeconds, 3), ratio(pw.scheduledCPUSeconds, base?.pipewire?.scheduledCPUSeconds),
                f(pw.voluntarySwitchesPerSecond, 1), f(p.involuntarySwitchesPerSecond, 1), f(p.maxSampledRSSMB, 1),
                row.requestedLatency ?? "–",
            ]
        }
        if !precise.isEmpty {
            out += "\nSame windows, CPU as schedstat run time (ns resolution, summed over threads):\n\n"
            out +=
                table(
                    [
                        "player", "CPU s", "×pw-play", "pipewire CPU s", "×pw-play", "pipewire wakeups/s",
                        "involuntary/s", "max VmRSS MB", "node.latency",
                    ], precise) + "\n\n"
        }
        out += "Busiest threads by voluntary switches/s (comm names; threads PipeWire starts inherit their creator's):\n"
        for row in report.players {
            if let threads = row.process?.threads.prefix(4), row.status == "ok" {
                out +=
                    "  \(row.name): "
                    + threads.map {
                        String(format: "%@ %.1f/s", $0.name, $0.voluntaryPerSecond)
                    }.joined(separator: ", ") + "\n"
            }
        }
        let notes = report.players.flatMap { row in row.notes.map { "  \(row.name): \($0)" } }
        if !notes.isEmpty { out += "notes:\n" + notes.joined(separator: "\n") + "\n" }

        let alone =
            !report.controlLatency.isEmpty || !report.controlUnderLoad.isEmpty || !report.fanOut.isEmpty || !report.fanOutErrors.isEmpty
            || !report.playToFirstAudio.isEmpty || !report.switches.isEmpty || report.idle != nil
            || report.companion != nil || report.startToAudible != nil || report.volumeOff != nil
        if alone { out += "\n## soundscaped alone\n\n" }
        if !report.controlUnderLoad.isEmpty {
            out +=
                "Control while the daemon works (GetStatus every \(f(report.controlUnderLoad[0].intervalMs, 1)) ms on a second connection; target max < 5 ms, p99 < 1 ms):\n\n"
            out +=
                table(
                    [
                        "while", "probes", "p50 ms", "p99 ms", "max ms", "max ms outside machine stalls", "machine stalls (longest ms)",
                        "the work took, ms",
                    ],
                    report.controlUnderLoad.map {
                        [
                            $0.scenario, "\($0.latencyMs.count)", f($0.latencyMs.p50, 2), f($0.latencyMs.p99, 2), f($0.latencyMs.max, 2),
                            f($0.latencyOutsideStallsMs.max, 2) + " (\($0.latencyMs.count - $0.latencyOutsideStallsMs.count) probes left out)",
                            "\($0.machineStalls) (\(f($0.longestMachineStallMs, 1)))",
                            $0.workMs.map { f($0, 0) }.joined(separator: ", "),
                        ]
                    }) + "\n"
            out +=
                "  (a machine stall: a SCHED_FIFO canary thread, which preempts every normal thread, woke over 1 ms late; no process can answer then)\n\n"
        }
        if !report.controlLatency.isEmpty {
            out += "Control round trips (one client, sequential, while playing), µs:\n\n"
            out +=
                table(
                    ["call", "calls", "p50 µs", "p99 µs", "max µs", "calls/s"],
                    report.controlLatency.map {
                        [
                            $0.method, "\($0.calls)", f($0.latencyMicroseconds.p50, 0), f($0.latencyMicroseconds.p99, 0),
                            f($0.latencyMicroseconds.max, 0), f($0.callsPerSecond, 0),
                        ]
                    }) + "\n\n"
        }
        if !report.fanOut.isEmpty {
            out += "Event fan-out (SetVolume → each subscriber's receipt of that seq), ms:\n\n"
            out +=
                table(
                    [
                        "subscribers", "events", "pairs", "p50 ms", "p99 ms", "max ms", "missing", "gaps",
                        "daemon CPU s", "bench CPU ms/event",
                    ],
                    report.fanOut.map {
                        [
                            "\($0.subscribers)", "\($0.events)", "\($0.pairs)", f($0.latencyMs.p50), f($0.latencyMs.p99),
                            f($0.latencyMs.max), "\($0.missingPairs)", "\($0.subscribersWithGaps)", f($0.daemonCPUSeconds),
                            f($0.benchCPUSeconds / Double($0.events) * 1000),
                        ]
                    }) + "\n"
            out +=
                "  (bench CPU ms/event: the bench's own CPU per event with \(report.options.clientThreads) client event-loop thread(s); "
                + "it bounds how much of the spread is the client reading 1 socket after another)\n"
            for r in report.fanOut {
                out +=
                    "  \(r.subscribers) subscribers: connected and subscribed in \(f(r.connectSeconds)) s; "
                    + "every seq validated as the matching volumeChanged: \(r.eventsValidated ? "yes" : "NO")"
                    + (r.notes.isEmpty ? "" : "; " + r.notes.joined(separator: "; ")) + "\n"
            }
            out += "\n"
        }
        for e in report.fanOutErrors { out += "  fan-out failed: \(e)\n" }
        if !report.playToFirstAudio.isEmpty {
            let trials = report.playToFirstAudio
            out += "Play (call sent, from stopped) → first audio at the sink, ms (time the recorder received the graph cycle carrying it):\n\n"
            func arrival(_ a: AudioArrival?) -> String {
                guard let a else { return "–" }
                return "\(f(a.ms, 1)) (prev. cycle \(f(a.previousWriteMs, 1)), +\(f(a.offsetInCycleMs, 1)) in cycle)"
            }
            var rows = trials.enumerated().map { i, t in
                [
                    "\(i + 1)", f(t.playReplyMs, 1), arrival(t.firstSound), arrival(t.audible),
                    t.firstSound.map { "\($0.cycleFrames)" } ?? "–",
                ]
            }
            rows.append([
                "median", f(Summary(trials.map(\.playReplyMs)).p50, 1),
                f(Summary(trials.compactMap(\.firstSound?.ms)).p50, 1),
                f(Summary(trials.compactMap(\.audible?.ms)).p50, 1), "",
            ])
            out +=
                table(
                    [
                        "trial", "Play reply", "first sound (≥ -120 dBFS)", "audible (≥ \(f(Double(report.options.silenceThresholdDB), 0)) dBFS)",
                        "cycle frames",
                    ], rows) + "\n"
            let notes = trials.flatMap(\.notes)
            if !notes.isEmpty { out += "  notes: " + notes.joined(separator: "; ") + "\n" }
            out += "\n"
        }
        if let start = report.startToAudible {
            out += startToAudible(start, audibleDB: Double(report.options.silenceThresholdDB))
        }
        if !report.switches.isEmpty {
            out += "Switch while playing (Play(other) round trip; soundscapeChanged event at a subscriber), ms:\n"
            out +=
                "  "
                + report.switches.map { "\($0.from)→\($0.to) \(f($0.replyMs, 1)) (event \(f($0.eventMs, 1)))" }
                .joined(separator: ", ") + "\n"
            out += "  reply median \(f(Summary(report.switches.map(\.replyMs)).p50, 1)) ms; audible change: not measured\n\n"
        }
        if let idle = report.idle {
            out += String(
                format:
                    "Stopped (state %@), %.0f s after the fade: soundscaped %.2f wakeups/s, CPU %.3f s (schedstat %.4f s), %d threads; pipewire %.2f wakeups/s, CPU %.3f s\n",
                idle.state, idle.daemon.seconds, idle.daemon.voluntarySwitchesPerSecond, idle.daemon.cpuSeconds,
                idle.daemon.scheduledCPUSeconds, idle.daemon.maxThreads,
                idle.pipewire.voluntarySwitchesPerSecond, idle.pipewire.cpuSeconds)
            let busy = idle.daemon.threads.filter { $0.voluntaryPerSecond > 0 }.prefix(5)
            if !busy.isEmpty {
                out +=
                    "  waking threads: "
                    + busy.map { String(format: "%@ %.2f/s", $0.name, $0.voluntaryPerSecond) }
                    .joined(separator: ", ") + "\n"
            }
        }
        if let off = report.volumeOff { out += volumeOff(off) }
        if let companion = report.companion {
            let q = companion.quiet
            let d = companion.daemonQuiet
            let b = companion.busy
            out += String(
                format:
                    "Desktop companion while soundscaped plays, %.0f s without changes: soundscaped-desktop %.2f wakeups/s, peak RSS %.1f MB, %d threads; soundscaped %.2f wakeups/s, peak RSS %.1f MB (companion/daemon RSS %.2f)\n",
                q.seconds, q.voluntarySwitchesPerSecond, q.peakRSSMB, q.maxThreads,
                d.voluntarySwitchesPerSecond, d.peakRSSMB, q.peakRSSMB / max(d.peakRSSMB, 0.001))
            out += String(
                format: "  with %d volume changes in %.0f s (an event and a PropertiesChanged each): %.1f wakeups/s, CPU %.3f s, peak RSS %.1f MB\n",
                companion.busyChanges, b.seconds, b.voluntarySwitchesPerSecond, b.cpuSeconds, b.peakRSSMB)
        }
        if let keepAlive = report.keepAlive {
            out += keepAliveTable(keepAlive)
        }
        if !report.errors.isEmpty { out += "\nerrors:\n" + report.errors.map { "  \($0)" }.joined(separator: "\n") + "\n" }
        return out
    }
}
