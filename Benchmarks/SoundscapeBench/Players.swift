import Foundation
import TestSupport
import Varlink
#if canImport(Glibc)
import Glibc
#endif

/// One row of the side-by-side table.
struct PlayerRow: Codable, Sendable {
    var name: String
    var command: String
    /// "ok", "not installed", or "failed".
    var status: String
    var notes: [String] = []
    /// The player process over the measured window.
    var process: ProcessWindowResult?
    /// The graph's pipewire server over the same window.
    var pipewire: ProcessWindowResult?
    /// RMS of 1 s recorded from the sink's monitor right after the window (player still running).
    var levelDBFS: Double?
    var peakDBFS: Double?
    var silent: Bool?
    /// Graph quantum while the player ran, seen as the recorder's write size.
    var quantumFrames: Int?
    /// `node.latency` the player's stream asked for (from pw-dump).
    var requestedLatency: String?
}

/// A peer player started as a plain command.
struct PeerPlayer: Sendable {
    var name: String
    var tool: String
    var arguments: @Sendable (String) -> [String]
    var loops: Bool

    static func all() -> [PeerPlayer] {
        [
            PeerPlayer(name: "pw-play", tool: "pw-play", arguments: { [$0] }, loops: false),
            PeerPlayer(
                name: "mpv", tool: "mpv",
                arguments: { ["--no-video", "--loop=inf", "--ao=pipewire", "--no-terminal", $0] }, loops: true),
            PeerPlayer(
                name: "gst-launch", tool: "gst-launch-1.0",
                arguments: {
                    [
                        "-q", "filesrc", "location=\($0)", "!", "oggdemux", "!", "opusdec", "!", "audioconvert", "!",
                        "audioresample", "!", "pipewiresink",
                    ]
                }, loops: false),
        ]
    }
}

/// Measures players one after another on the shared graph.
struct PlayerBench {
    let graph: PipeWireGraph
    let sink: String
    let options: Options
    let fileDuration: Double?

    var pipewirePID: Int32 {
        get throws {
            guard let pid = graph.process(.pipewire)?.pid else { throw HarnessError("the graph's pipewire is not running") }
            return pid
        }
    }

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }

    /// The gst and GStreamer plugin registry is built on first use into the
    /// graph's XDG_CACHE_HOME; do that before anything is measured.
    func prepare(_ player: PeerPlayer) {
        if player.tool == "gst-launch-1.0", ExternalTools.path(of: "gst-inspect-1.0") != nil {
            _ = try? graph.run(["gst-inspect-1.0", "pipewiresink"], timeout: .seconds(60))
        }
    }

    func run(_ player: PeerPlayer) async -> PlayerRow {
        let file = options.file
        let commandLine = ([player.tool] + player.arguments(file)).joined(separator: " ")
        var row = PlayerRow(name: player.name, command: commandLine, status: "ok")
        guard ExternalTools.path(of: player.tool) != nil else {
            row.status = "not installed"
            row.notes.append("\(player.tool) not found in PATH")
            return row
        }
        if !player.loops, let fileDuration {
            let needed = options.warmup + options.seconds + 1.5
            if fileDuration < needed {
                row.notes.append(
                    String(
                        format: "%@ does not loop and the file lasts %.1f s < %.1f s needed; it ends early",
                        player.tool, fileDuration, needed))
            }
        }
        prepare(player)
        log("\(player.name): starting `\(commandLine)`")
        let child: ChildProcess
        do {
            child = try graph.spawn(player.tool, player.arguments(file), name: player.name)
        } catch {
            row.status = "failed"
            row.notes.append("could not start: \(error)")
            return row
        }
        do {
            let node = try waitForStreaming(pid: child.pid, process: child, what: player.name)
            row.requestedLatency = node.props["node.latency"]
            try await measure(pid: child.pid, into: &row, stillRunning: { child.isRunning })
        } catch {
            row.status = "failed"
            row.notes.append("\(error)")
        }
        child.terminate(gracePeriod: .seconds(3))
        // Its stream is gone once nothing feeds the sink any more; then let the graph settle.
        do {
            try graph.waitUntilNothingFeeds(sink, "\(player.name)'s links to the sink to go away")
        } catch {
            row.notes.append("\(error)")
        }
        try? await Task.sleep(for: .seconds(options.pause))
        return row
    }

    /// Measures soundscaped: it must already be started; plays and measures from when Play returns.
    func runSoundscaped(_ daemon: DaemonUnderTest, soundscape: String) async -> PlayerRow {
        var row = PlayerRow(
            name: "soundscaped", command: "\(daemon.executable) + Play({\"soundscape\":\"\(soundscape)\"})", status: "ok")
        guard let pid = daemon.pid, let process = daemon.process else {
            row.status = "failed"
            row.notes.append("daemon not running")
            return row
        }
        do {
            log("soundscaped: Play(\(soundscape))")
            let reply = try await daemon.call("Play", ["soundscape": .string(soundscape)])
            let status = reply["status"]?.objectValue ?? [:]
            if status["isPlaying"]?.boolValue != true {
                row.notes.append("Play replied with isPlaying=false (state \(status["state"]?.stringValue ?? "?"))")
            }
            if let node = try? graph.snapshot().nodes(ofProcess: pid).first(where: { $0.mediaClass?.hasPrefix("Stream/Output") == true }) {
                row.requestedLatency = node.props["node.latency"]
            }
            try await measure(pid: pid, into: &row, stillRunning: { process.isRunning })
        } catch {
            row.status = "failed"
            row.notes.append("\(error)")
        }
        return row
    }

    /// Warm-up, the sampled window, then 1 s of recording to check the sink carries sound.
    private func measure(pid: Int32, into row: inout PlayerRow, stillRunning: () -> Bool) async throws {
        try await Task.sleep(for: .seconds(options.warmup))
        guard stillRunning() else { throw HarnessError("\(row.name) exited during the warm-up\n\(graph.logTail(lines: 10))") }
        let window = ProcessWindow()
        window.begin([pid, try pipewirePID])
        log(String(format: "%@: measuring %.0f s", row.name, options.seconds))
        try await Task.sleep(for: .seconds(options.seconds))
        let results = window.end()
        row.process = results[0]
        row.pipewire = results[1]
        if results[0].exitedDuringWindow || !stillRunning() {
            row.notes.append("the player exited during the window; counters stop at its last sample")
        }
        // The level check runs right after the window, with the player still
        // playing, so the recorder's own load is not in the numbers above.
        if stillRunning() {
            let level = try recordLevel()
            row.levelDBFS = level.rms
            row.peakDBFS = level.peak
            row.quantumFrames = level.quantum
            row.silent = level.rms < -60
            if level.rms < -60 { row.notes.append(String(format: "SILENT: the sink carried %.1f dBFS", level.rms)) }
        } else {
            row.notes.append("no level check: the player had exited")
        }
    }

    func recordLevel(seconds: Double = 1) throws -> (rms: Double, peak: Double, quantum: Int?) {
        let recording = try graph.startRecording(sink: sink)
        let clock = RecordingClock(file: recording.file, interval: 0.002)
        clock.start()
        Thread.sleep(forTimeInterval: seconds)
        clock.stop()
        let clip = try recording.stop()
        let layout = try? RecordingClock.dataLayout(of: recording.file)
        try? FileManager.default.removeItem(at: recording.file)
        return (Double(clip.rmsDB()), Double(clip.peakDB), layout.flatMap { clock.typicalCycleFrames(layout: $0) })
    }

    /// Waits until the process has an output stream node that is running and
    /// linked to the sink (bounded: 20 s).
    func waitForStreaming(pid: Int32, process: ChildProcess, what: String) throws -> PipeWireGraph.Node {
        var seen = "nothing"
        do {
            return try waitForValue(timeout: .seconds(20), pollInterval: .milliseconds(50), "\(what) to stream") {
                () -> PipeWireGraph.Node? in
                if let status = process.exitStatus {
                    throw HarnessError("\(what) \(status) before it streamed\n\(graph.logTail(lines: 10))")
                }
                guard let snap = try? graph.snapshot() else { return nil }
                let nodes = snap.nodes(ofProcess: pid)
                seen = nodes.map(\.description).joined(separator: "; ")
                guard let sinkNode = snap.node(named: sink) else { return nil }
                return nodes.first { node in
                    node.state == "running" && snap.isLinked(output: node.id, input: sinkNode.id)
                }
            }
        } catch let error as HarnessError where error.message.hasPrefix("Timed out") {
            throw HarnessError("\(error.message); its nodes: \(seen)")
        }
    }
}

extension PipeWireGraph {
    /// Waits (bounded) until no link goes into `sink`: the last player's stream has left it.
    func waitUntilNothingFeeds(_ sink: String, _ what: String) throws {
        try waitUntil(timeout: .seconds(5), what) {
            guard let snap = try? snapshot(), let node = snap.node(named: sink) else { return false }
            return snap.links(to: node.id).isEmpty
        }
    }
}
