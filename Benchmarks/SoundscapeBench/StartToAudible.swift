import Foundation
import TestSupport

/// One start: a process spawned, and its first sound at the sink.
struct StartTrial: Codable, Sendable {
    var player: String
    /// From just before the spawn to the first frame that is not digital silence.
    var firstSound: AudioArrival?
    /// From just before the spawn to the first frame at the audible level.
    var audible: AudioArrival?
    var notes: [String] = []
}

struct StartToAudibleResult: Codable, Sendable {
    var trials: [StartTrial]
    /// Spawn to audible, ms, per player.
    var soundscapedAudibleMs: Summary
    var pwPlayAudibleMs: Summary
    /// The medians' ratio, soundscaped over pw-play.
    var ratio: Double?
}

/// Start to audible, soundscaped beside pw-play in the same run: how soon a
/// newly spawned process is heard. For soundscaped that is a restart after a
/// crash, the case the soak's daemon-kill fault measures: the daemon was
/// playing, dies by SIGKILL, and a new process resumes the saved session on
/// its own (systemd's `Restart=on-failure` does the spawning there; here the
/// bench does, with the same arguments). pw-play is spawned on the same file.
///
/// Each trial records the sink first (so the sink runs, as it does in the soak
/// under its recorders, and a new stream joins a running graph), stamps
/// CLOCK_MONOTONIC just before the spawn, records for `window` seconds and
/// maps the first frame at each level to the recorder's write that held it
/// (`RecordingClock.onset`), exactly as "Play to audible" does. The players
/// alternate, trial by trial, so load on the machine falls on both alike.
struct StartToAudibleBench {
    let daemon: DaemonUnderTest
    let graph: PipeWireGraph
    let sink: String
    let options: Options
    let soundscape: String

    /// How long each start is recorded: long enough for a slow start on a busy machine.
    static let window = 2.0

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }

    func run(trials: Int) async throws -> StartToAudibleResult {
        // What the restarted daemon resumes: the soundscape playing at unity gain, like
        // pw-play. Both commands are answered once written, so they are on disk.
        try await daemon.call("Play", ["soundscape": .string(soundscape)])
        try await daemon.call("SetVolume", ["volume": 100])
        // A restart after a crash plays from the PCM cache, which the first play built: wait
        // for it (on a busy machine the build, at SCHED_IDLE, can take a while).
        let cache = graph.directory.appendingPathComponent("cache/soundscaped/pcm").path
        try waitUntil(timeout: .seconds(120), pollInterval: .milliseconds(200), "the PCM cache of '\(soundscape)' in \(cache)") {
            ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [])
                .contains { $0.hasPrefix("\(soundscape)-") && $0.hasSuffix(".f32") }
        }
        try await daemon.crash()
        try graph.waitUntilNothingFeeds(sink, "the killed daemon's stream to leave the sink")
        var out: [StartTrial] = []
        for trial in 1...trials {
            for player in ["soundscaped", "pw-play"] {
                let result = player == "soundscaped" ? try await restartDaemon() : try await startPwPlay()
                log(
                    String(
                        format: "start→audible trial %d, %@: %@", trial, player,
                        result.audible.map {
                            String(
                                format: "audible %.1f ms (first sound %@)", $0.ms,
                                Render.f(result.firstSound?.ms, 1))
                        }
                            ?? result.notes.joined(separator: "; ")))
                out.append(result)
            }
        }
        // The steps after this one talk to the daemon: bring it back (it resumes playing).
        try daemon.spawn()
        try await daemon.connectWhenAnswering()
        func audible(_ player: String) -> Summary {
            Summary(out.filter { $0.player == player }.compactMap(\.audible?.ms))
        }
        let ours = audible("soundscaped")
        let theirs = audible("pw-play")
        return StartToAudibleResult(
            trials: out, soundscapedAudibleMs: ours, pwPlayAudibleMs: theirs,
            ratio: ours.count > 0 && theirs.count > 0 ? ours.p50 / theirs.p50 : nil)
    }

    /// Time a new daemon from its spawn to sound (the last one was killed playing), and
    /// check that it says it plays; then kill it, as a crash, for the next trial.
    private func restartDaemon() async throws -> StartTrial {
        var trial = try await timeStart(player: "soundscaped") { try daemon.spawn() }
        try await daemon.connectWhenAnswering()
        let status = try await daemon.status()
        if status["isPlaying"]?.boolValue != true {
            trial.notes.append("the restarted daemon is not playing (state \(status["state"]?.stringValue ?? "?"))")
        }
        try await daemon.crash()
        try graph.waitUntilNothingFeeds(sink, "the killed daemon's stream to leave the sink")
        return trial
    }

    private func startPwPlay() async throws -> StartTrial {
        var child: ChildProcess?
        let trial = try await timeStart(player: "pw-play") {
            child = try graph.spawn("pw-play", [options.file], name: "pw-play-start")
        }
        if let child {
            if !child.isRunning {
                throw HarnessError("pw-play exited early: \(child.exitStatus.map { "\($0)" } ?? "?")\n\(graph.logTail(lines: 10))")
            }
            child.terminate(gracePeriod: .seconds(3))
        }
        try graph.waitUntilNothingFeeds(sink, "pw-play's stream to leave the sink")
        return trial
    }

    /// Records the sink, spawns, records `window` seconds, and finds the onset.
    private func timeStart(player: String, spawn: () throws -> Void) async throws -> StartTrial {
        let recording = try graph.startRecording(sink: sink)
        let clock = RecordingClock(file: recording.file)
        clock.start()
        try await Task.sleep(for: .milliseconds(300))  // some silence, and writes to calibrate against
        let spawned = monoNanos()
        try spawn()
        try await Task.sleep(for: .seconds(Self.window))  // the window being recorded
        clock.stop()
        let clip = try recording.stop()
        let onset = try clock.onset(
            in: clip, audibleDB: Double(options.silenceThresholdDB), since: spawned,
            cause: "the spawn (was the last player still heard?)")
        try? FileManager.default.removeItem(at: recording.file)
        return StartTrial(player: player, firstSound: onset.firstSound, audible: onset.audible, notes: onset.notes)
    }
}
