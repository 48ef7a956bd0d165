import ArgumentParser
import Foundation
import TestSupport

/// The full benchmark's settings, with their defaults (`FullBench` reads them from the command
/// line; the JSON report holds them).
struct Options: Codable, Sendable {
    var seconds: Double = 20
    var warmup: Double = 1
    var pause: Double = 0.8
    var file: String = ProductLocator.soundscapesDirectory.appendingPathComponent("ocean-waves.opus").path
    var daemon: String?
    var json: String?
    var players: [String] = ["pw-play", "mpv", "gst-launch", "soundscaped"]
    var calls = 10_000
    var subscribers: [Int] = [100, 1000]
    var events = 50
    var spacingMs: Double = 20
    var playTrials = 5
    var startTrials = 8
    var volumeOffSeconds: Double = 10
    var switchTrials = 4
    var idleSeconds: Double = 10
    var companionSeconds: Double = 10
    var keepAliveSeconds: Double = 40
    var keepAliveFastChecks = 200
    var keepAliveRounds = 3
    var clientThreads = 1
    var silenceThresholdDB: Float = -60
    var daemonDetails = true
    var longMinutes = 40
    var listFiles = 200
    var probeIntervalMs: Double = 2
    var stallCanary = true
}

/// `soundscape-bench [full] [OPTIONS]`: the side-by-side benchmark, the default mode.
struct FullBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "full",
        abstract: "The side-by-side benchmark against pw-play, mpv and GStreamer (the default mode).",
        usage: "soundscape-bench [full] [<options>]",
        discussion: """
            Plays the same file with soundscaped, pw-play, mpv and gst-launch-1.0, one after \
            another on one private PipeWire graph (null sink), and measures each from /proc; \
            then measures soundscaped alone (control latency, event fan-out, Play to first \
            audio, start to audible beside pw-play, switching, volume off, idle) and the keep-alive \
            as a whole with its health checks. Prints the environment and tables; --json writes raw numbers.

            The other modes: graph, layers, import, sink-sound, wav, memory and health-cost \
            (`soundscape-bench help` says what each is, `soundscape-bench MODE --help` more). \
            memory and health-cost are CI's budgets and exit 1 over the budget.
            """,
        helpNames: BenchArguments.helpNames)

    static let defaults = Options()
    static let knownPlayers = ["pw-play", "mpv", "gst-launch", "soundscaped"]

    @Option(help: "Measured window per player, s.") var seconds = FullBench.defaults.seconds
    @Option(help: "Excluded warm-up before each window, s.") var warmup = FullBench.defaults.warmup
    @Option(help: ArgumentHelp("Opus file all players play.", valueName: "path"), completion: .file()) var file = FullBench.defaults.file
    @OptionGroup var daemon: DaemonOption
    @Option(help: ArgumentHelp("Also write the raw numbers as JSON.", valueName: "file")) var json: String?
    @Option(help: ArgumentHelp("Comma-separated subset of pw-play,mpv,gst-launch,soundscaped.", valueName: "list"))
    var players = FullBench.defaults.players.joined(separator: ",")
    @Option(help: "GetStatus and SetVolume round trips each.") var calls = FullBench.defaults.calls
    @Option(help: ArgumentHelp("Fan-out subscriber counts, comma-separated.", valueName: "list"))
    var subscribers = FullBench.defaults.subscribers.map(String.init).joined(separator: ",")
    @Option(help: "SetVolume events per fan-out run (at least 1).") var events = FullBench.defaults.events
    @Option(help: "Time between those calls, ms.") var spacingMs = FullBench.defaults.spacingMs
    @Option(help: "Play → first audio repetitions.") var playTrials = FullBench.defaults.playTrials
    @Option(
        help: """
            Start → audible: soundscaped restarted after a SIGKILL (resuming its saved session) \
            and pw-play spawned, alternately, N each.
            """)
    var startTrials = FullBench.defaults.startTrials
    @Option(
        help: """
            soundscaped playing, then at volume 0: the sink's state and the daemon's wake-ups \
            over an N s window each (0 skips).
            """)
    var volumeOffSeconds = FullBench.defaults.volumeOffSeconds
    @Option(help: "Soundscape switches.") var switchTrials = FullBench.defaults.switchTrials
    @Option(help: "Stopped-daemon window, s.") var idleSeconds = FullBench.defaults.idleSeconds
    @Option(help: "soundscaped-desktop beside the playing daemon, quiet and busy windows, s (0 skips).")
    var companionSeconds = FullBench.defaults.companionSeconds
    @Option(
        help: """
            The keep-alive as a whole (the daemon and the processes its health checks start, with an \
            igloo-server stand-in as the signer): no check, the built-in HTTP check and curl | jq at the \
            default interval, an N s window each, against pw-play (0 skips).
            """)
    var keepaliveSeconds = FullBench.defaults.keepAliveSeconds
    @Option(help: "Rounds of pw-play, no check and the HTTP check, for medians.") var keepaliveRounds = FullBench.defaults.keepAliveRounds
    @Option(help: "The HTTP check's CPU per check, over N checks at a 0.05 s interval (0 skips).")
    var keepaliveFastChecks = FullBench.defaults.keepAliveFastChecks
    @Option(help: "Event-loop threads of the bench's varlink clients (at least 1).") var clientThreads = FullBench.defaults.clientThreads
    @Option(help: "Control under load: a cold Play of an N-minute soundscape (0 skips).") var longMinutes = FullBench.defaults.longMinutes
    @Option(help: "Control under load: ListSoundscapes over N more files (0 skips).") var listFiles = FullBench.defaults.listFiles
    @Option(help: "Control under load: GetStatus interval, ms (at least 0.1).") var probeMs = FullBench.defaults.probeIntervalMs
    @Flag(help: "Control under load: no SCHED_FIFO canary thread telling machine stalls.") var noStallCanary = false
    @Flag(help: "Only the players table.") var noDaemonDetails = false

    func validate() throws {
        guard seconds.isFinite, seconds > 0 else { throw ValidationError("--seconds must be > 0") }
        for (value, option) in [
            (warmup, "--warmup"), (spacingMs, "--spacing-ms"), (volumeOffSeconds, "--volume-off-seconds"),
            (idleSeconds, "--idle-seconds"), (companionSeconds, "--companion-seconds"), (keepaliveSeconds, "--keepalive-seconds"),
            (probeMs, "--probe-ms"),
        ] {
            try BenchArguments.requireFigure(value, option)
        }
        for (value, option) in [
            (calls, "--calls"), (events, "--events"), (playTrials, "--play-trials"), (startTrials, "--start-trials"),
            (switchTrials, "--switch-trials"), (keepaliveRounds, "--keepalive-rounds"), (keepaliveFastChecks, "--keepalive-fast-checks"),
            (clientThreads, "--client-threads"), (longMinutes, "--long-minutes"), (listFiles, "--list-files"),
        ] {
            try BenchArguments.requireCount(value, option)
        }
        _ = try options()
    }

    /// The settings this command line gives.
    func options() throws -> Options {
        var o = Options()
        o.seconds = seconds
        o.warmup = warmup
        o.file = BenchArguments.path(file)
        o.daemon = daemon.daemon.map(BenchArguments.path)
        o.json = json
        o.players = try BenchArguments.list(players, of: Self.knownPlayers, "--players")
        o.calls = calls
        o.subscribers = try subscribers.split(separator: ",").map { text in
            guard let count = Int(text), count >= 0 else { throw ValidationError("--subscribers takes counts ≥ 0, not '\(text)'") }
            return count
        }
        o.events = max(1, events)
        o.spacingMs = spacingMs
        o.playTrials = playTrials
        o.startTrials = startTrials
        o.volumeOffSeconds = volumeOffSeconds
        o.switchTrials = switchTrials
        o.idleSeconds = idleSeconds
        o.companionSeconds = companionSeconds
        o.keepAliveSeconds = keepaliveSeconds
        o.keepAliveFastChecks = keepaliveFastChecks
        o.keepAliveRounds = keepaliveRounds
        o.clientThreads = max(1, clientThreads)
        o.longMinutes = longMinutes
        o.listFiles = listFiles
        o.probeIntervalMs = max(0.1, probeMs)
        o.stallCanary = !noStallCanary
        o.daemonDetails = !noDaemonDetails
        return o
    }

    func run() async throws {
        let settings = try options()
        // Run off the main actor: the measuring loops should not hop through it.
        throw ExitCode(await Task.detached { await Bench(options: settings).run() }.value)
    }
}
