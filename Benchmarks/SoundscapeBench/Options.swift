import Foundation
import TestSupport

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

    static let usage = """
        usage: soundscape-bench [options]
               soundscape-bench sink-sound SINK [--window SECONDS] [--manifest PATH]
               soundscape-bench import [--minutes N] [--hour-minutes N] [--rounds N] [--json FILE] ...
               soundscape-bench layers [--seconds N] [--rounds N] [--trials N] [--play-trials N] [--daemon PATH] [--json FILE]
               soundscape-bench wav level FILE | soundscape-bench wav tone FILE
               soundscape-bench memory [--compare] [--fresh] [--daemon PATH] [BUDGET_KB]
               soundscape-bench health-cost [--daemon PATH] [BUDGET_MS]

        Plays the same file with soundscaped, pw-play, mpv and gst-launch-1.0, one after
        another on one private PipeWire graph (null sink), and measures each from /proc;
        then measures soundscaped alone (control latency, event fan-out, Play to first
        audio, start to audible beside pw-play, switching, volume off, idle) and the keep-alive as a whole with
        its health checks. Prints the environment and tables; --json writes raw numbers.

          --seconds N          measured window per player (default 20)
          --warmup N           excluded warm-up before each window (default 1)
          --file PATH          Opus file all players play (default soundscapes/ocean-waves.opus)
          --daemon PATH        soundscaped to measure (default: next to this executable)
          --json FILE          also write the raw numbers as JSON
          --players LIST       comma-separated subset of pw-play,mpv,gst-launch,soundscaped
          --calls N            GetStatus and SetVolume round trips each (default 10000)
          --subscribers LIST   fan-out subscriber counts (default 100,1000)
          --events N           SetVolume events per fan-out run (default 50)
          --spacing-ms N       time between those calls (default 20)
          --play-trials N      Play → first audio repetitions (default 5)
          --start-trials N     start → audible: soundscaped restarted after a SIGKILL (resuming its
                               saved session) and pw-play spawned, alternately, N each (default 8)
          --volume-off-seconds N  soundscaped playing, then at volume 0: the sink's state and the
                               daemon's wake-ups over an N s window each (default 10; 0 skips)
          --switch-trials N    soundscape switches (default 4)
          --idle-seconds N     stopped-daemon window (default 10)
          --companion-seconds N  soundscaped-desktop beside the playing daemon, quiet and busy windows (default 10; 0 skips)
          --keepalive-seconds N  the keep-alive as a whole (the daemon and the processes its health checks start, with an
                               igloo-server stand-in as the signer): no check, the built-in HTTP check and curl | jq at the
                               default interval, an N s window each, against pw-play (default 40; 0 skips)
          --keepalive-rounds N  rounds of pw-play, no check and the HTTP check, for medians (default 3)
          --keepalive-fast-checks N  the HTTP check's CPU per check, over N checks at a 0.05 s interval (default 200; 0 skips)
          --client-threads N   event-loop threads of the bench's varlink clients (default 1)
          --long-minutes N     control under load: a cold Play of an N-minute soundscape (default 40; 0 skips)
          --list-files N       control under load: ListSoundscapes over N more files (default 200; 0 skips)
          --probe-ms N         control under load: GetStatus interval (default 2)
          --no-stall-canary    control under load: no SCHED_FIFO canary thread telling machine stalls
          --no-daemon-details  only the players table

        import: `soundscapectl import` per format beside ffmpeg's decode and Opus encode of the
        same file, and an hour's peak RSS (`soundscape-bench import --help`; docs/performance.md).

        layers: three layers against pw-play (CPU, wake-ups per cycle, peak RSS), SetLayer to
        audible at the sink, Play(layers) against Play(soundscape) (LayersBench.swift).

        sink-sound: what SINK carries (soundscape, the signer-down cue, or silence), one JSON
        line per window as it arrives (Benchmarks/SoundscapeBench/SinkSound.swift says more).
        wav: a recording's level and peak, or the call's test tone (WAVTool.swift).
        memory, health-cost: CI's budgets, exit 1 over the budget (Gates.swift).
        """

    /// An option's value as a number (`soundscape-bench import` reads its own the same way).
    static func number(_ text: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v >= 0 else { throw HarnessError("not a number: \(text)") }
        return v
    }

    static func integer(_ text: String) throws -> Int {
        guard let v = Int(text), v >= 0 else { throw HarnessError("not a count: \(text)") }
        return v
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var o = Options()
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw HarnessError("\(arguments[i - 1]) needs a value\n\n\(usage)") }
            return arguments[i]
        }
        while i < arguments.count {
            let arg = arguments[i]
            switch arg {
            case "-h", "--help":
                print(usage)
                exit(0)
            case "--seconds": o.seconds = try number(try value())
            case "--warmup": o.warmup = try number(try value())
            case "--file": o.file = URL(fileURLWithPath: try value()).standardizedFileURL.path
            case "--daemon": o.daemon = URL(fileURLWithPath: try value()).standardizedFileURL.path
            case "--json": o.json = try value()
            case "--players":
                o.players = try value().split(separator: ",").map { String($0) }
                let known: Set = ["pw-play", "mpv", "gst-launch", "soundscaped"]
                if let bad = o.players.first(where: { !known.contains($0) }) {
                    throw HarnessError("unknown player '\(bad)' (known: \(known.sorted().joined(separator: ", ")))")
                }
            case "--calls": o.calls = try integer(try value())
            case "--subscribers": o.subscribers = try value().split(separator: ",").map { try integer(String($0)) }
            case "--events": o.events = max(1, try integer(try value()))
            case "--spacing-ms": o.spacingMs = try number(try value())
            case "--play-trials": o.playTrials = try integer(try value())
            case "--start-trials": o.startTrials = try integer(try value())
            case "--volume-off-seconds": o.volumeOffSeconds = try number(try value())
            case "--switch-trials": o.switchTrials = try integer(try value())
            case "--idle-seconds": o.idleSeconds = try number(try value())
            case "--companion-seconds": o.companionSeconds = try number(try value())
            case "--keepalive-seconds": o.keepAliveSeconds = try number(try value())
            case "--keepalive-fast-checks": o.keepAliveFastChecks = try integer(try value())
            case "--keepalive-rounds": o.keepAliveRounds = try integer(try value())
            case "--client-threads": o.clientThreads = max(1, try integer(try value()))
            case "--long-minutes": o.longMinutes = try integer(try value())
            case "--list-files": o.listFiles = try integer(try value())
            case "--probe-ms": o.probeIntervalMs = max(0.1, try number(try value()))
            case "--no-stall-canary": o.stallCanary = false
            case "--no-daemon-details": o.daemonDetails = false
            default: throw HarnessError("unknown option '\(arg)'\n\n\(usage)")
            }
            i += 1
        }
        guard o.seconds > 0 else { throw HarnessError("--seconds must be > 0") }
        return o
    }
}
