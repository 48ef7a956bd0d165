import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Varlink
#if canImport(Glibc)
import Glibc
#endif

/// Side-by-side benchmark of soundscaped against other players on one private
/// PipeWire graph (`FullBench`, the default mode), and the bench's other modes: tools for
/// the scripts' checks (sink-sound, wav), their private graph (graph), the importer's and
/// the layers' figures (import, layers), CI's budgets (memory, health-cost).
/// `scripts/bench` builds and runs it.
@main
struct SoundscapeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundscape-bench",
        abstract: "soundscaped's benchmarks, CI's budgets, and the scripts' tools.",
        discussion: """
            With no mode, the full benchmark (`soundscape-bench --help` lists its options). \
            A mode's --help says what it does. Usage errors exit 64.
            """,
        subcommands: [
            FullBench.self, GraphCommand.self, LayersCommand.self, ImportCommand.self, SinkSoundCommand.self, WAVCommand.self,
            MemoryCommand.self, HealthCostCommand.self,
        ],
        defaultSubcommand: FullBench.self,
        helpNames: [])
}

func log(_ text: String) {
    FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
}

/// The graph and daemon, reachable from the signal handler for cleanup.
final class Cleanup: @unchecked Sendable {
    static let shared = Cleanup()
    private let lock = NSLock()
    private var graph: PipeWireGraph?

    func register(_ graph: PipeWireGraph) { lock.withLock { self.graph = graph } }

    /// Stops every process the bench started (the daemon is a child of the graph).
    func run() {
        let graph = lock.withLock { () -> PipeWireGraph? in
            defer { self.graph = nil }
            return self.graph
        }
        graph?.stop()
    }
}

struct Bench {
    let options: Options
    static let sink = "bench-sink"

    func run() async -> Int32 {
        let signals = Self.installSignalHandlers()
        defer { signals.forEach { $0.cancel() } }
        raiseFileLimit()

        var report = BenchReport(
            commandLine: CommandLine.arguments, date: ISO8601DateFormatter().string(from: Date()), options: options)
        guard FileManager.default.isReadableFile(atPath: options.file) else {
            log("cannot read --file \(options.file)")
            return 66
        }
        let fileSeconds = OpusFile.duration(of: options.file)
        let daemonPath = options.daemon ?? Self.defaultDaemonPath()
        let wantsDaemon = options.players.contains("soundscaped") || options.daemonDetails
        if wantsDaemon || options.keepAliveSeconds > 0, !FileManager.default.isExecutableFile(atPath: daemonPath) {
            log("no soundscaped at \(daemonPath): build it (`swift build -c release`) or pass --daemon PATH")
            return 69
        }

        guard let graph = Self.startGraph() else { return 70 }
        defer { Cleanup.shared.run() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: options.clientThreads)

        report.environment = EnvironmentSummary.collect(graph: graph, file: options.file, fileSeconds: fileSeconds)
        FileHandle.standardError.write(Data(Render.environment(report).utf8))

        // 1. Players, one after another: the peers first, soundscaped last (it stays up for part 2).
        let players = PlayerBench(graph: graph, sink: Self.sink, options: options, fileDuration: fileSeconds)
        var rows: [String: PlayerRow] = [:]
        for peer in PeerPlayer.all() where options.players.contains(peer.name) {
            rows[peer.name] = await players.run(peer)
        }

        var daemon: DaemonUnderTest?
        var soundscape = "?"
        if wantsDaemon {
            do {
                let (id, extra) = try SoundscapeChoice.resolve(file: options.file, daemon: daemonPath, graph: graph)
                soundscape = id
                let d = DaemonUnderTest(graph: graph, executable: daemonPath, extraArguments: extra, group: group)
                log("starting \(daemonPath)")
                try await d.start()
                daemon = d
                let list = try await d.call("ListSoundscapes")["soundscapes"]?.arrayValue ?? []
                guard list.contains(where: { $0["id"]?.stringValue == id }) else {
                    throw HarnessError("soundscaped does not offer '\(id)' (it has \(list.compactMap { $0["id"]?.stringValue }))")
                }
                // Unity gain like the other players (a fresh daemon starts at 50 %).
                try await d.call("SetVolume", ["volume": 100])
            } catch {
                report.errors.append("soundscaped: \(error)")
                log("soundscaped failed to start: \(error)")
                await daemon?.stop()
                daemon = nil
            }
        }
        if options.players.contains("soundscaped") {
            if let daemon {
                var row = await players.runSoundscaped(daemon, soundscape: soundscape)
                row.notes.insert("volume set to 100 % (unity gain, like the other players)", at: 0)
                rows["soundscaped"] = row
            } else {
                rows["soundscaped"] = PlayerRow(
                    name: "soundscaped", command: daemonPath, status: "failed",
                    notes: report.errors)
            }
        }
        report.players = ["soundscaped", "pw-play", "mpv", "gst-launch"].compactMap { rows[$0] }

        // 2. soundscaped alone.
        if options.daemonDetails, let daemon {
            let bench = DaemonBench(
                daemon: daemon, graph: graph, sink: Self.sink, options: options,
                soundscape: soundscape, group: group)
            do {
                if (try await daemon.status()["isPlaying"]?.boolValue) != true {
                    try await daemon.call("Play", ["soundscape": .string(soundscape)])
                }
                if options.calls > 0 { report.controlLatency = try await bench.controlLatency(calls: options.calls) }
            } catch {
                report.errors.append("control latency: \(error)")
            }
            do {
                report.controlUnderLoad = try await ControlUnderLoad(daemon: daemon, graph: graph, options: options)
                    .run(returnTo: soundscape)
            } catch {
                report.errors.append("control under load: \(error)")
            }
            for n in options.subscribers where n > 0 {
                do {
                    let fan = FanOutBench(daemon: daemon, group: group)
                    report.fanOut.append(
                        try await fan.run(
                            subscribers: n, events: options.events,
                            spacingMs: options.spacingMs))
                    try await Task.sleep(for: .milliseconds(500))  // let the daemon drop the closed subscribers
                } catch {
                    report.fanOutErrors.append("\(n) subscribers: \(error)")
                }
            }
            if options.switchTrials > 0 {
                do {
                    let list = try await daemon.call("ListSoundscapes")["soundscapes"]?.arrayValue ?? []
                    let ids = list.compactMap { $0["id"]?.stringValue }.filter { $0 != soundscape }
                    if let other = ids.contains("rain") ? "rain" : ids.first {
                        report.switches = try await bench.switchTimes(trials: options.switchTrials, other: other)
                    }
                } catch {
                    report.errors.append("switch: \(error)")
                }
            }
            if options.playTrials > 0 {
                do {
                    report.playToFirstAudio = try await bench.playToFirstAudio(trials: options.playTrials)
                } catch {
                    report.errors.append("play to first audio: \(error)")
                }
            }
            if options.startTrials > 0 {
                do {
                    report.startToAudible = try await StartToAudibleBench(
                        daemon: daemon, graph: graph, sink: Self.sink, options: options, soundscape: soundscape
                    )
                    .run(trials: options.startTrials)
                } catch {
                    report.errors.append("start to audible: \(error)")
                }
            }
            if options.companionSeconds > 0 {
                do {
                    _ = try await daemon.call("Play", ["soundscape": .string(soundscape)])
                    report.companion = try await CompanionBench(daemon: daemon, graph: graph).run(seconds: options.companionSeconds)
                } catch {
                    report.errors.append("companion: \(error)")
                }
            }
            if options.volumeOffSeconds > 0 {
                do {
                    report.volumeOff = try await VolumeOffBench(
                        daemon: daemon, graph: graph, sink: Self.sink,
                        soundscape: soundscape
                    )
                    .run(seconds: options.volumeOffSeconds)
                } catch {
                    report.errors.append("volume off: \(error)")
                }
            }
            if options.idleSeconds > 0 {
                do {
                    report.idle = try await bench.idle(seconds: options.idleSeconds)
                } catch {
                    report.errors.append("idle: \(error)")
                }
            }
        }
        if let daemon {
            await daemon.stop()
        }
        // 3. The keep-alive as a whole: fresh daemons with a signer and its health check.
        if options.keepAliveSeconds > 0 {
            do {
                let (id, extra) = try SoundscapeChoice.resolve(file: options.file, daemon: daemonPath, graph: graph)
                // pw-play again, right before each round: the machine's load drifts over a run, so
                // the ratio is taken against a pw-play window next to the keep-alive's.
                let pwPlay = PeerPlayer.all().first { $0.name == "pw-play" }
                report.keepAlive = try await KeepAliveBench(
                    graph: graph, daemonPath: daemonPath, soundscape: id, extraArguments: extra,
                    seconds: options.keepAliveSeconds, fastChecks: options.keepAliveFastChecks,
                    rounds: options.keepAliveRounds, group: group,
                    pwPlay: {
                        guard let pwPlay else { return nil }
                        let row = await players.run(pwPlay)
                        return row.status == "ok" ? row.process : nil
                    }
                ).run()
            } catch {
                report.errors.append("keep-alive: \(error)")
            }
        }
        Cleanup.shared.run()
        try? await group.shutdownGracefully()

        print(Render.full(report))
        if let path = options.json {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                encoder.nonConformingFloatEncodingStrategy = .convertToString(
                    positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
                try encoder.encode(report).write(to: URL(fileURLWithPath: path))
                log("wrote \(path)")
            } catch {
                log("could not write \(path): \(error)")
                return 73
            }
        }
        return report.errors.isEmpty ? 0 : 1
    }

    /// A private graph with the bench's null sink as its default, registered for cleanup;
    /// nil (logged) when it cannot start.
    static func startGraph() -> PipeWireGraph? {
        do {
            log("starting a private PipeWire graph")
            let graph = try PipeWireGraph.started()
            Cleanup.shared.register(graph)
            try graph.createNullSink(name: sink)
            try graph.waitForDefaultSink(sink, timeout: .seconds(10))
            return graph
        } catch {
            log("could not start the graph: \(error)")
            Cleanup.shared.run()
            return nil
        }
    }

    static func defaultDaemonPath() -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("soundscaped").path
    }

    /// 1,000 subscriber sockets need more than the usual soft limit of 1,024 descriptors.
    func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max
        else { return }
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            log("could not raise the open-file limit (\(limit.rlim_cur))")
        }
    }

    /// Ctrl-C or SIGTERM: stop the graph (and with it the daemon and players), then exit.
    static func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                log("signal \(sig): cleaning up")
                Cleanup.shared.run()
                exit(128 + sig)
            }
            source.resume()
            return source
        }
    }
}

/// Which soundscape id the daemon plays for `--file`.
enum SoundscapeChoice {
    /// The daemon's built-in entry when the file is one of them (same bytes);
    /// otherwise a copy in an extra directory passed with `--soundscapes-dir`.
    static func resolve(file: String, daemon: String, graph: PipeWireGraph) throws -> (String, [String]) {
        let url = URL(fileURLWithPath: file)
        let bytes = try Data(contentsOf: url)
        if let builtin = builtinDirectory(daemon: daemon),
            let manifest = try? JSONDecoder().decode(Manifest.self, from: Data(contentsOf: builtin.appendingPathComponent("manifest.json"))),
            let entry = manifest.soundscapes.first(where: {
                (try? Data(contentsOf: builtin.appendingPathComponent($0.file))) == bytes
            })
        {
            return (entry.id, [])
        }
        var stem = url.deletingPathExtension().lastPathComponent
        if stem.isEmpty || stem.hasPrefix(".") || stem.hasPrefix("-") { stem = "bench-file" }
        let dir = graph.directory.appendingPathComponent("bench-soundscapes")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try bytes.write(to: dir.appendingPathComponent("\(stem).opus"))
        return (stem, ["--soundscapes-dir", dir.path])
    }

    struct Manifest: Decodable {
        struct Entry: Decodable {
            var id: String
            var file: String
        }
        var soundscapes: [Entry]
    }

    /// Like the daemon: a `soundscapes/manifest.json` up to six levels above the executable.
    static func builtinDirectory(daemon: String) -> URL? {
        var dir = URL(fileURLWithPath: daemon).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent("soundscapes")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("manifest.json").path) {
                return candidate
            }
            dir.deleteLastPathComponent()
        }
        return nil
    }
}

/// Duration of an Ogg Opus file: last page's granule position minus pre-skip, at 48 kHz.
enum OpusFile {
    static func duration(of path: String) -> Double? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let b = [UInt8](data)
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[o + $1]) << (8 * UInt64($1)) } }
        guard let head = FrameScan.find(Array("OpusHead".utf8), in: Array(b.prefix(4096))),
            head + 12 <= b.count
        else { return nil }
        let preSkip = UInt64(b[head + 10]) | UInt64(b[head + 11]) << 8
        // Walk back to the last "OggS" page header.
        var i = b.count - 27
        while i >= 0 {
            if b[i] == 0x4F, b[i + 1] == 0x67, b[i + 2] == 0x67, b[i + 3] == 0x53 {
                let granule = u64(i + 6)
                guard granule != UInt64.max, granule > preSkip else { return nil }
                return Double(granule - preSkip) / 48_000
            }
            i -= 1
        }
        return nil
    }
}
