import ArgumentParser
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `soundscape-bench sink-sound SINK [--window SECONDS] [--manifest PATH]`: what a
/// sink carries, as it arrives. Records SINK's monitor with pw-record (in the
/// caller's PipeWire session) and prints one JSON line per window (default 0.1 s)
/// until killed or until pw-record ends (exit 1):
///
///     {"t": 5234.567, "rms": -31.2, "cue": 0.01, "kind": "soundscape"}
///
/// `kind` is TestSupport's `CueClassifier` verdict (soundscape, cue, sound or
/// silence; the cue's tones from the soundscapes' manifest.json, the checkout's by
/// default). `t` is when the window ended, on CLOCK_MONOTONIC (Python's
/// time.monotonic()), so a caller can place it beside its own events: the arrival
/// time of the graph cycle that carried it, less the frames after the window's end.
/// `rms` is in dBFS (-200 for digital silence), `cue` the chime's share of the
/// window's power. Run by scripts/check-bunker.py and the soak
/// (scripts/soak.d/soak_measure.py).
struct SinkSoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink-sound",
        abstract: "What a sink carries (soundscape, the signer-down cue, or silence), one JSON line per window.",
        discussion: "Runs until killed, or until pw-record ends (exit 1). SinkSound.swift says what each line holds.",
        helpNames: BenchArguments.helpNames)

    @Argument(help: ArgumentHelp("The sink whose monitor is recorded.", valueName: "sink")) var sink: String
    @Option(help: ArgumentHelp("Each window, s (at most 10).", valueName: "seconds")) var window = 0.1
    @Option(
        help: ArgumentHelp("The soundscapes' manifest.json with the cue's tones (default: the checkout's).", valueName: "path"),
        completion: .file())
    var manifest: String?

    func validate() throws {
        guard window.isFinite, window > 0, window <= 10 else { throw ValidationError("--window takes more than 0 and at most 10 s") }
    }

    func run() throws {
        throw ExitCode(SinkSound.main(sink: sink, window: window, manifest: manifest.map { URL(fileURLWithPath: $0) }))
    }
}

enum SinkSound {
    static func main(sink: String, window: Double, manifest: URL?) -> Int32 {
        let classifier: CueClassifier
        do {
            classifier = CueClassifier(frames: Int(CueClassifier.rate * window), tones: try CueClassifier.signerDownTones(manifest: manifest))
        } catch {
            return fail("\(error)")
        }
        return monitor(sink: sink, classifier: classifier)
    }

    static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("sink-sound: \(message)\n".utf8))
        return 64
    }

    /// The recorder's pid, for the signal handler (which may only call kill).
    nonisolated(unsafe) static var recorder: pid_t = 0

    static func monitor(sink: String, classifier: CueClassifier) -> Int32 {
        var classifier = classifier
        let frames = classifier.frames
        let rate = Int(CueClassifier.rate)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return fail("pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink=true node.dont-reconnect=true }",
            "--format", "s16", "--rate", "\(rate)", "--channels", "1", "-",
        ]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "pw-record", &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else { return fail("cannot start pw-record: \(String(cString: strerror(spawned)))") }
        recorder = pid
        for sig in [SIGTERM, SIGINT, SIGPIPE] {
            signal(sig) { _ in
                if SinkSound.recorder > 0 { kill(SinkSound.recorder, SIGKILL) }
                _exit(0)
            }
        }
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }

        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let windowBytes = 2 * frames
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            let arrived = monotonicSeconds()
            guard count > 0 else {
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                recorder = 0
                FileHandle.standardError.write(Data("sink-sound: pw-record for \(sink) ended (status \(status))\n".utf8))
                return 1
            }
            if pending.isEmpty, count >= 4, buffer[0..<4].elementsEqual("RIFF".utf8) {
                return fail("pw-record wrote a WAV header to its stdout; this expects raw samples")
            }
            pending += buffer[0..<count]
            let whole = pending.count / windowBytes
            guard whole > 0 else { continue }
            var lines = ""
            for index in 0..<whole {
                let base = index * windowBytes
                let samples = (0..<frames).map { frame -> Float in
                    let low = UInt16(pending[base + 2 * frame])
                    let high = UInt16(pending[base + 2 * frame + 1])
                    return Float(Int16(bitPattern: low | high << 8)) / 32768
                }
                let verdict = classifier.classify(samples)
                // This window ended `later` frames before the last one that arrived.
                let later = pending.count / 2 - (index + 1) * frames
                let t = arrived - Double(later) / Double(rate)
                let rms = verdict.rmsDB > -200 ? (verdict.rmsDB * 10).rounded() / 10 : -200
                lines +=
                    #"{"t": \#(String(format: "%.3f", t)), "rms": \#(rms), "cue": \#(String(format: "%.3f", verdict.share)), "kind": "\#(verdict.kind.rawValue)"}"#
                lines += "\n"
            }
            FileHandle.standardOutput.write(Data(lines.utf8))
            pending.removeFirst(whole * windowBytes)
        }
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
