import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Varlink

/// Layers (issue 39), measured against pw-play in the same run:
///
///     soundscape-bench layers [--seconds N] [--rounds N] [--trials N] [--play-trials N] [--daemon PATH] [--json FILE]
///
/// On one private graph, the release daemon's PCM cache first holds the three layers'
/// loops (the daemon plays the mix until their files are there: a build decoding on
/// another thread is not what steady playback costs). Then `--rounds` rounds (default 3)
/// of pw-play on the bench's file, the daemon playing one soundscape (that file's), and
/// the daemon playing three layers (`LayersBench.mix`), and pw-play once more, each for
/// an N s window (default 10) after 1 s of warm-up; the daemon is stopped (its stream
/// inactive) while pw-play plays. For each window: CPU (schedstat, all threads),
/// wake-ups per graph cycle (voluntary context switches over the cycles the sink ran, the
/// quantum read from a recorder), and peak RSS (VmHWM). A round's ratio is to the mean of
/// the pw-play windows either side of it; the figure is the median of the rounds' (so one
/// window disturbed by the machine's other work moves it little). Then, N trials (default
/// 5; 0 skips them):
///
/// - SetLayer(tone, 100) while the three layers play, to the tone audible at the sink:
///   the first 1024-frame window (hop 256) whose power at the tone's frequency
///   (Goertzel) is 10 dB over the most the mix put there before the call, timed at the
///   recorder's receipt of the window's last frame (so at most 21 ms late);
/// - then N play trials (default 15): Play(soundscape), Play(layers), Play(mix: a saved
///   mix of the same three layers) and Play(soundscape: that mix's name), which is what
///   `soundscapectl play NAME` sends, from stopped, in turn: their replies, and each mix's
///   median over the soundscape's.
///
/// Budgets (docs/performance.md, "Layers"): three layers ≤ 0.35× pw-play's CPU (the median
/// of the rounds), one wake-up per graph cycle, peak RSS < 16 MiB (the three layers from
/// the cache; the mix's first play is reported, and `memory --layers` judges it with its
/// margin), SetLayer to audible ≤ 300 ms (median). Exits 1 over one, 70 when the
/// measurement failed. CI runs it under `taskset -c 0`, every process it starts on one
/// CPU (the header says which CPUs a run had): on two, the CPU figure is mostly where the
/// scheduler puts the daemon against PipeWire ("One CPU or two" in the docs).
struct LayersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layers",
        abstract: "Three layers against pw-play, SetLayer to audible, and Play(layers) against Play(soundscape).",
        discussion: "Exits 1 over a budget, 70 when the measurement failed (LayersBench.swift says what each measures).",
        helpNames: BenchArguments.helpNames)

    @Option(help: "Each window, s, after 1 s of warm-up.") var seconds = 10.0
    @Option(help: "Rounds of pw-play, one soundscape and three layers, for medians.") var rounds = 3
    @Option(help: "SetLayer to audible trials (0 skips them).") var trials = 5
    @Option(help: "Play trials of each kind (0 skips them).") var playTrials = 15
    @OptionGroup var daemon: DaemonOption
    @Option(help: ArgumentHelp("Also write the raw numbers as JSON.", valueName: "file")) var json: String?

    func validate() throws {
        guard seconds.isFinite, seconds > 0 else { throw ValidationError("--seconds must be > 0") }
        guard rounds > 0 else { throw ValidationError("--rounds must be > 0") }
        try BenchArguments.requireCount(trials, "--trials")
        try BenchArguments.requireCount(playTrials, "--play-trials")
    }

    func run() async throws {
        let (daemon, seconds, rounds, trials) = (self.daemon.path, self.seconds, self.rounds, self.trials)
        let (playTrials, json) = (self.playTrials, self.json)
        // Run off the main actor, like the full benchmark.
        throw ExitCode(
            await Task.detached {
                await LayersBench.main(daemon: daemon, seconds: seconds, rounds: rounds, trials: trials, playTrials: playTrials, json: json)
            }.value)
    }
}

struct LayersBench {
    /// The three built-in soundscapes and their levels.
    static let mix: [(id: String, level: Int)] = [("rain", 100), ("ocean-waves", 40), ("wind", 25)]
    static let tone = (id: "layer-bench-tone", hertz: 1000.0)
    /// `mix` saved under this name, for Play(mix:).
    static let savedMix = "layer bench mix"
    static let budget = (cpuRatio: 0.35, wakeupsPerCycle: 1.1, peakRSSMiB: 16.0, audibleMs: 300.0)

    struct Window: Codable, Sendable {
        var name: String
        var process: ProcessWindowResult
        var quantumFrames: Int?
        var levelDBFS: Double
        /// Voluntary wake-ups (all threads) per graph cycle; and the busiest thread's alone.
        var wakeupsPerCycle: Double?
        var busiestThread: String?
        var busiestThreadWakeupsPerCycle: Double?
    }

    struct Result: Codable, Sendable {
        var date: String
        var commandLine: [String]
        /// The CPUs this run (and every process it starts) may run on: `taskset -c 0`
        /// makes it one, where every wake-up is a local one.
        var allowedCPUs: String? = processAllowedCPUs()
        var windows: [Window] = []
        /// Each round's ratios to the pw-play windows either side of it; the medians below.
        var roundRatiosOne: [Double] = []
        var roundRatiosThree: [Double] = []
        var cpuRatioOne: Double?
        var cpuRatioThree: Double?
        /// The peak RSS of the daemon that played the mix first and filled the cache.
        var firstPlayPeakRSSMiB: Double?
        var setLayerReplyMs: [Double] = []
        var setLayerToAudibleMs: [Double] = []
        var playOneReplyMs: [Double] = []
        var playMixReplyMs: [Double] = []
        var playSavedMixReplyMs: [Double] = []
        var playNamedMixReplyMs: [Double] = []
        var notes: [String] = []
    }

    let graph: PipeWireGraph
    let group: any EventLoopGroup
    let daemonPath: String
    let seconds: Double
    let rounds: Int
    let trials: Int
    let playTrials: Int

    static func main(daemon: String, seconds: Double, rounds: Int, trials: Int, playTrials: Int, json: String?) async -> Int32 {
        let signals = Bench.installSignalHandlers()
        defer { signals.forEach { $0.cancel() } }
        guard let graph = Bench.startGraph() else { return 70 }
        defer { Cleanup.shared.run() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bench = LayersBench(
            graph: graph, group: group, daemonPath: daemon, seconds: seconds, rounds: rounds, trials: trials,
            playTrials: playTrials)
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await bench.run()) } catch { outcome = .failure(error) }
        try? await group.shutdownGracefully()
        guard case .success(let result) = outcome else {
            if case .failure(let error) = outcome { log("error: \(error)") }
            return 70
        }
        print(render(result))
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            do { try encoder.encode(result).write(to: URL(fileURLWithPath: json)) } catch {
                log("could not write \(json): \(error)")
                return 73
            }
        }
        let errors = DaemonUnderTest.loggedErrors(in: graph)
        if !errors.isEmpty { log("error: soundscaped logged errors:\n" + errors.joined(separator: "\n")) }
        let over = overBudget(result)
        over.forEach { log("over budget: \($0)") }
        return over.isEmpty && errors.isEmpty ? 0 : 1
    }

    func run() async throws -> Result {
        var result = Result(date: ISO8601DateFormatter().string(from: Date()), commandLine: CommandLine.arguments)
        var options = Options()
        options.seconds = seconds
        let players = PlayerBench(graph: graph, sink: Bench.sink, options: options, fileDuration: OpusFile.duration(of: options.file))
        guard let pwPlay = PeerPlayer.all().first(where: { $0.name == "pw-play" }) else { throw HarnessError("no pw-play peer") }

        let extra = try makeToneSoundscape()
        let (single, more) = try SoundscapeChoice.resolve(file: options.file, daemon: daemonPath, graph: graph)
        guard more.isEmpty else { throw HarnessError("\(options.file) is not a built-in soundscape") }

        var pwPlayCPU: [Double] = []
        func peer() async throws {
            let row = await players.run(pwPlay)
            guard row.status == "ok", let process = row.process else { throw HarnessError("pw-play: \(row.notes)") }
            pwPlayCPU.append(process.scheduledCPUSeconds)
            result.windows.append(window("pw-play", process, quantum: row.quantumFrames, level: row.levelDBFS ?? -.infinity))
        }

        let cache = graph.directory.appendingPathComponent("layer-bench-cache")
        let arguments = extra + ["--cache-dir", cache.path]
        result.firstPlayPeakRSSMiB = try await warmCache(cache, arguments: arguments)
        let daemon = DaemonUnderTest(graph: graph, executable: daemonPath, extraArguments: arguments, group: group)
        log("starting \(daemonPath)")
        try await daemon.start()
        try await daemon.call("SetVolume", ["volume": 100])

        let three = Self.mix.map { "\($0.id)=\($0.level)" }.joined(separator: " ")
        var daemonCPU: [(one: Double, three: Double)] = []
        for round in 1...rounds {
            log("round \(round) of \(rounds)")
            try await peer()
            try await daemon.call("Play", ["soundscape": .string(single)])
            try await daemon.waitForState("playing")
            let one = try await measure(daemon, "soundscaped, \(single)", players: players)
            try await daemon.call("Play", Self.mixParameters)
            try await daemon.waitForState("playing")
            let mix = try await measure(daemon, "soundscaped, \(three)", players: players)
            result.windows += [one, mix]
            daemonCPU.append((one.process.scheduledCPUSeconds, mix.process.scheduledCPUSeconds))
            try await stopPlaying(daemon)
        }
        try await peer()
        for (round, cpu) in daemonCPU.enumerated() {
            let peerCPU = (pwPlayCPU[round] + pwPlayCPU[round + 1]) / 2
            result.roundRatiosOne.append(cpu.one / peerCPU)
            result.roundRatiosThree.append(cpu.three / peerCPU)
        }
        result.cpuRatioOne = Self.median(result.roundRatiosOne)
        result.cpuRatioThree = Self.median(result.roundRatiosThree)

        if trials > 0 { try await setLayerTrials(daemon, into: &result, players: players) }
        try await playReplyTrials(daemon, single: single, into: &result)
        await daemon.stop()
        return result
    }

    /// A daemon of its own plays the mix until the PCM cache (`cache`, its --cache-dir) holds
    /// a decoded loop for each layer; returns its peak RSS, MiB (a mix's first play: three
    /// decoders and three cache builds at once). The daemon builds them at idle priority,
    /// so on a busy machine this can take a while. The daemon measured afterwards is a new
    /// one, playing from the cache, as every play after the first does.
    private func warmCache(_ cache: URL, arguments: [String]) async throws -> Double {
        let daemon = DaemonUnderTest(graph: graph, executable: daemonPath, extraArguments: arguments, group: group)
        log("starting \(daemonPath) to fill its PCM cache")
        try await daemon.start()
        do {
            try await daemon.call("Play", Self.mixParameters)
            try await daemon.waitForState("playing")
            log("waiting for the PCM cache to hold the \(Self.mix.count) layers' loops")
            try Self.waitForMixCached(in: cache.path)
            try await stopPlaying(daemon)
            guard let pid = daemon.pid, let peak = ProcFS.statusFields("/proc/\(pid)/status")["VmHWM"] else {
                throw HarnessError("no VmHWM for the daemon that filled the cache")
            }
            await daemon.stop()
            return Double(peak) / 1024
        } catch {
            await daemon.stop()
            throw error
        }
    }

    /// Stops the daemon's playback: its stream goes inactive, so it does not run while pw-play is measured.
    private func stopPlaying(_ daemon: DaemonUnderTest) async throws {
        try await daemon.call("Stop")
        try await daemon.waitForState("stopped")
        try await Task.sleep(for: .milliseconds(500))  // past the 250 ms fade-out
    }

    /// Waits until the PCM cache directory `cache` holds a decoded loop for each of the
    /// mix's layers (builds run at idle priority: on a busy machine that can take a while).
    static func waitForMixCached(in cache: String) throws {
        try waitUntil(timeout: .seconds(180), pollInterval: .milliseconds(200), "the PCM cache to hold the layers' loops") {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
            return names.filter { $0.hasSuffix(".f32") }.count >= mix.count
        }
    }

    static var mixParameters: [String: JSONValue] {
        ["layers": .array(mix.map { .object(["id": .string($0.id), "level": .number(Double($0.level))]) })]
    }

    /// `<tone>.opus` in a directory of its own, passed with --soundscapes-dir.
    private func makeToneSoundscape() throws -> [String] {
        let dir = graph.directory.appendingPathComponent("layer-bench-soundscapes")
        _ = try ToneLoops.make(id: Self.tone.id, frequency: Int(Self.tone.hertz), amplitude: 0.3, in: dir)
        return ["--soundscapes-dir", dir.path]
    }

    private func window(_ name: String, _ process: ProcessWindowResult, quantum: Int?, level: Double) -> Window {
        let cycles = quantum.map { 48_000 / Double($0) }
        let busiest = process.threads.first
        return Window(
            name: name, process: process, quantumFrames: quantum, levelDBFS: level,
            wakeupsPerCycle: cycles.map { process.voluntarySwitchesPerSecond / $0 }, busiestThread: busiest?.name,
            busiestThreadWakeupsPerCycle: cycles.flatMap { c in busiest.map { $0.voluntaryPerSecond / c } })
    }

    private func measure(_ daemon: DaemonUnderTest, _ name: String, players: PlayerBench) async throws -> Window {
        guard let pid = daemon.pid, let pipewire = graph.process(.pipewire)?.pid else { throw HarnessError("soundscaped is not running") }
        try await Task.sleep(for: .seconds(1))
        let window = ProcessWindow()
        window.begin([pid, pipewire])
        log(String(format: "%@: measuring %.0f s", name, seconds))
        try await Task.sleep(for: .seconds(seconds))
        let process = window.end()[0]
        let level = try players.recordLevel()
        return self.window(name, process, quantum: level.quantum, level: level.rms)
    }

    /// SetLayer(tone, 100) while the mix plays, to the tone at the sink; the mix played anew between trials.
    private func setLayerTrials(_ daemon: DaemonUnderTest, into result: inout Result, players: PlayerBench) async throws {
        for trial in 1...trials {
            try await daemon.call("Play", Self.mixParameters)
            try await Task.sleep(for: .seconds(1))  // past the 600 ms crossfade that took the tone out
            let recording = try graph.startRecording(sink: Bench.sink)
            let clock = RecordingClock(file: recording.file)
            clock.start()
            try await Task.sleep(for: .milliseconds(400))  // the mix alone: the tone's frequency before
            let sent = monoNanos()
            try await daemon.call("SetLayer", ["soundscape": .string(Self.tone.id), "level": .number(100)])
            let replied = monoNanos()
            try await Task.sleep(for: .milliseconds(800))
            clock.stop()
            let clip = try recording.stop()
            defer { try? FileManager.default.removeItem(at: recording.file) }
            result.setLayerReplyMs.append(secondsBetween(sent, replied) * 1000)
            if let ms = try toneArrival(in: clip, clock: clock, since: sent) {
                result.setLayerToAudibleMs.append(ms)
                log(String(format: "SetLayer → tone audible, trial %d: %.1f ms", trial, ms))
            } else {
                result.notes.append("trial \(trial): the tone was not found at the sink")
            }
        }
    }

    /// Ms from `since` to the recorder's receipt of the first window with the tone 10 dB over the mix's
    /// power at its frequency before `since`.
    private func toneArrival(in clip: AudioClip, clock: RecordingClock, since: UInt64) throws -> Double? {
        let layout = try RecordingClock.dataLayout(of: clock.file)
        let before = clock.observations.last { $0.nanos < since }.map { max(0, ($0.bytes - layout.offset) / layout.frameBytes) } ?? 0
        let samples = clip.channel(0)
        let frames = 1024
        let hop = 256
        var classifier = CueClassifier(frames: frames, tones: [Self.tone.hertz])
        var floor = -Double.infinity
        var start = 0
        while start + frames <= samples.count {
            let verdict = classifier.classify(Array(samples[start..<start + frames]))
            let toneDB = verdict.share > 0 ? verdict.rmsDB + 10 * log10(verdict.share) : -Double.infinity
            if start + frames <= before {
                floor = max(floor, toneDB)
            } else if start >= before, toneDB >= max(floor + 10, -60) {
                guard let arrival = clock.arrival(ofFrame: start + frames - 1, layout: layout) else { return nil }
                return secondsBetween(since, arrival.nanos) * 1000
            }
            start += hop
        }
        return nil
    }

    /// Play(soundscape), Play(layers), Play(mix: the three saved) and Play(soundscape: their name), from
    /// stopped, in turn: their replies.
    private func playReplyTrials(_ daemon: DaemonUnderTest, single: String, into result: inout Result) async throws {
        guard playTrials > 0 else { return }
        try await daemon.call("Play", Self.mixParameters)
        try await daemon.call("SaveMix", ["name": .string(Self.savedMix)])
        let plays: [(parameters: [String: JSONValue], replies: WritableKeyPath<Result, [Double]>)] = [
            (["soundscape": .string(single)], \.playOneReplyMs), (Self.mixParameters, \.playMixReplyMs),
            (["mix": .string(Self.savedMix)], \.playSavedMixReplyMs),
            (["soundscape": .string(Self.savedMix)], \.playNamedMixReplyMs),
        ]
        for _ in 1...playTrials {
            for play in plays {
                try await daemon.call("Stop")
                try await daemon.waitForState("stopped")
                try await Task.sleep(for: .milliseconds(800))
                let sent = monoNanos()
                try await daemon.call("Play", play.parameters)
                result[keyPath: play.replies].append(secondsBetween(sent, monoNanos()) * 1000)
            }
        }
        log(
            String(
                format: "Play replies, median: one %.1f ms, three layers %.1f ms, saved mix %.1f ms",
                Self.median(result.playOneReplyMs), Self.median(result.playMixReplyMs),
                Self.median(result.playSavedMixReplyMs)))
    }

    static func overBudget(_ r: Result) -> [String] {
        var over: [String] = []
        if let ratio = r.cpuRatioThree, ratio > budget.cpuRatio {
            over.append(String(format: "three layers' CPU %.2f× pw-play > %.2f×", ratio, budget.cpuRatio))
        }
        if let three = r.windows.last(where: { $0.name.hasPrefix("soundscaped") }) {
            if let w = three.wakeupsPerCycle, w > budget.wakeupsPerCycle {
                over.append(String(format: "three layers wake %.2f times per graph cycle", w))
            }
            if three.process.peakRSSMB >= budget.peakRSSMiB { over.append(String(format: "peak RSS %.1f MiB", three.process.peakRSSMB)) }
        }
        if r.setLayerToAudibleMs.count < r.setLayerReplyMs.count { over.append("a SetLayer's tone was not heard") }
        if !r.setLayerToAudibleMs.isEmpty, median(r.setLayerToAudibleMs) > budget.audibleMs {
            over.append(String(format: "SetLayer to audible %.1f ms (median)", median(r.setLayerToAudibleMs)))
        }
        return over
    }

    static func render(_ r: Result) -> String {
        func f(_ v: Double?, _ digits: Int = 2) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "–" }
        let peer = r.windows.filter { $0.name == "pw-play" }.map(\.process.scheduledCPUSeconds)
        let peerMean = peer.isEmpty ? nil : peer.reduce(0, +) / Double(peer.count)
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        let all = cpus == 1 ? "0" : "0-\(cpus - 1)"
        let placement = r.allowedCPUs.map { $0 == all ? "\(cpus) CPUs" : "on CPU \($0) of \(cpus) (taskset)" } ?? "\(cpus) CPUs"
        var out = "Layers, \(r.date), \(placement); \(r.commandLine.joined(separator: " "))\n\n"
        out +=
            "| window | CPU s (schedstat) | ×pw-play (mean of its windows) | wake-ups/s | per graph cycle | busiest thread per cycle | peak RSS MiB | level dBFS |\n"
        out += "|---|---|---|---|---|---|---|---|\n"
        for w in r.windows {
            let ratio = peerMean.map { w.process.scheduledCPUSeconds / $0 }
            out += "| \(w.name) | \(f(w.process.scheduledCPUSeconds, 3)) | \(f(ratio))× | \(f(w.process.voluntarySwitchesPerSecond, 1)) | "
            out += "\(f(w.wakeupsPerCycle)) (quantum \(w.quantumFrames.map(String.init) ?? "?")) | "
            out += "\(f(w.busiestThreadWakeupsPerCycle)) (\(w.busiestThread ?? "?")) | \(f(w.process.peakRSSMB, 1)) | \(f(w.levelDBFS, 1)) |\n"
        }
        func line(_ name: String, _ values: [Double]) -> String {
            guard !values.isEmpty else { return "\(name): –\n" }
            return "\(name): median \(f(median(values), 1)) ms, min \(f(values.min(), 1)), max \(f(values.max(), 1)) (\(values.count))\n"
        }
        out += "\n"
        out += line("SetLayer(tone, 100) → tone audible at the sink", r.setLayerToAudibleMs)
        out += line("SetLayer reply", r.setLayerReplyMs)
        out += line("Play(soundscape) reply, from stopped", r.playOneReplyMs)
        out += line("Play(three layers) reply, from stopped", r.playMixReplyMs)
        out += line("Play(mix: the three saved) reply, from stopped", r.playSavedMixReplyMs)
        out += line("Play(soundscape: the saved mix's name) reply, from stopped", r.playNamedMixReplyMs)
        for (name, replies) in [
            ("Play(three layers)", r.playMixReplyMs), ("Play(mix)", r.playSavedMixReplyMs),
            ("Play(soundscape: mix name)", r.playNamedMixReplyMs),
        ]
        where !r.playOneReplyMs.isEmpty && !replies.isEmpty {
            out += "\(name) ÷ Play(soundscape), medians: \(f(median(replies) / median(r.playOneReplyMs)))×\n"
        }
        if !r.roundRatiosThree.isEmpty {
            let rounds = zip(r.roundRatiosOne, r.roundRatiosThree).map { "\(f($0))×, \(f($1))×" }.joined(separator: "; ")
            out += "\nCPU ×pw-play, each round's to the pw-play windows either side (one soundscape, three layers): \(rounds)\n"
            out += "median of the rounds: one soundscape \(f(r.cpuRatioOne))×, three layers \(f(r.cpuRatioThree))× "
            out += "(budget \(f(budget.cpuRatio))×)\n"
        }
        if let peak = r.firstPlayPeakRSSMiB {
            out += "peak RSS of the mix's first play (the cache built while it plays, another daemon): \(f(peak, 1)) MiB\n"
        }
        r.notes.forEach { out += "note: \($0)\n" }
        return out
    }

    static func median(_ values: [Double]) -> Double { values.isEmpty ? .nan : Summary(values).p50 }
}
