import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a user hears: the real daemon and CLI on a private PipeWire graph,
/// checked by recording the sink's monitor.
@Suite("Playback on a private PipeWire graph", .serialized, .timeLimit(.minutes(1)))
struct PlaybackTests {
    @Test("play makes the default soundscape audible on the default sink, and status says so")
    func playIsAudible() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()

            let play = try daemon.must("play")
            #expect(play.stdout.contains("Playing ocean-waves at 50% on speaker"), "\(play.stdout)")
            let status = try daemon.status()
            #expect(status["state"] as? String == "playing")
            #expect(status["isPlaying"] as? Bool == true)
            #expect(status["soundscape"] as? String == "ocean-waves")
            #expect(status["volume"] as? Int == 50)
            #expect(status["route"] as? String == "speaker")

            let clip = try graph.record(sink: "speaker", seconds: 1.5)
            let level = clip.rmsDB(from: 0.2, to: clip.duration)
            // ocean-waves is mastered at about -21 dBFS RMS; 50 % is -18 dB on the cubic curve.
            #expect(level > -50 && level < -30, "level \(level) dBFS")
            #expect(clip.silentStretches(thresholdDB: -70, minMs: 20).filter { $0.lowerBound > 0.2 }.isEmpty)
        }
    }

    @Test("the data thread runs at realtime priority whenever the graph gives it to pw-play")
    func dataThreadIsRealtime() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let process = try daemon.start()
            try daemon.must("play")
            let ours = try waitForValue("soundscaped's data thread, named soundscaped-rt") {
                Self.threads(of: process.pid).first { $0.name == "soundscaped-rt" }
            }

            // Whether realtime is granted at all (RTKit, RLIMIT_RTPRIO, root) is the
            // machine's business; pw-play, on the same graph, says what it grants.
            let peer = try graph.spawn("pw-play", [ProductLocator.soundscapesDirectory.appendingPathComponent("rain.opus").path])
            let peerIsRealtime =
                (try? waitUntil(timeout: .seconds(3), "pw-play's data thread to be realtime") {
                    Self.threads(of: peer.pid).contains { $0.policy == SCHED_FIFO || $0.policy == SCHED_RR }
                }) != nil
            if peerIsRealtime {
                #expect(ours.policy == SCHED_FIFO || ours.policy == SCHED_RR, "policy \(ours.policy), pw-play's is realtime")
            } else {
                print("note: this machine gives pw-play no realtime priority either; nothing to compare")
            }
        }
    }

    @Test("only the PipeWire modules a playback client uses are loaded, and it plays")
    func loadsOnlyTheModulesItUses() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let process = try daemon.start()
            try daemon.must("play")
            let maps = try #require(ProcFS.read("/proc/\(process.pid)/maps"))
            let modules = Set(
                maps.split(separator: "\n").compactMap { line -> String? in
                    guard let name = line.split(separator: "/").last, name.hasPrefix("libpipewire-module-") else { return nil }
                    return String(name.dropLast(3))  // ".so"
                })
            #expect(
                modules == [
                    "libpipewire-module-rt", "libpipewire-module-protocol-native", "libpipewire-module-client-node",
                    "libpipewire-module-adapter", "libpipewire-module-metadata",
                ], "\(modules.sorted())")
            let clip = try graph.record(sink: "speaker", seconds: 1)
            #expect(clip.rmsDB(from: 0.3, to: 1) > -60, "the stream plays through the trimmed context")
        }
    }

    /// Each thread's name and scheduling policy.
    private static func threads(of pid: Int32) -> [(name: String, policy: Int32)] {
        ProcFS.taskIDs(pid).compactMap { tid in
            guard let stat = ProcStat(path: "/proc/\(pid)/task/\(tid)/stat"),
                let policy = stat.field(41).flatMap({ Int32($0) })
            else { return nil }
            return (stat.name, policy)
        }
    }

    @Test("a played loop is decoded once into the PCM cache, and playing goes on from it across the seam")
    func loopIsCachedAndPlaysFromTheCache() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone440", frequency: 440, seconds: 2, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone440")

            let cache = URL(fileURLWithPath: try #require(graph.environment["XDG_CACHE_HOME"]))
                .appendingPathComponent("soundscaped/pcm")
            // 2 s at 48 kHz, stereo float, after a 32-byte header.
            let expectedSize = 32 + 96_000 * 8
            let file = try waitForValue(timeout: .seconds(10), "a tone440-*.f32 file of \(expectedSize) bytes in \(cache.path)") {
                try? FileManager.default.contentsOfDirectory(atPath: cache.path).first {
                    $0.hasPrefix("tone440-") && $0.hasSuffix(".f32")
                        && (try? FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent($0).path)[.size] as? Int) == expectedSize
                }
            }
            #expect(
                !(try FileManager.default.contentsOfDirectory(atPath: cache.path).contains { $0.contains(".tmp-") }),
                "no half-written file is left beside \(file)")

            // Long enough that every sample comes from the cache and the seam is crossed.
            let clip = try graph.record(sink: "speaker", seconds: 3)
            let level = clip.rmsDB(from: 0.2, to: clip.duration)
            #expect(abs(level - (-9.03)) < 1, "a 0.5 sine at 100 % should be -9 dBFS, got \(level)")
            #expect(clip.silentStretches(thresholdDB: -70, minMs: 5).filter { $0.lowerBound > 0.2 }.isEmpty)
            // From the first sound: the recording's first cycle can be silent (startRecording).
            let sound = clip.fromFirstSound()
            #expect(sound.maxStep < 0.04, "largest sample step \(sound.maxStep) at \(sound.maxStepLocation)s")
        }
    }

    @Test("playing from the PCM cache, only the data thread wakes: refills ride on its cycles")
    func cachedPlaybackWakesOnlyTheDataThread() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            // Short, so the window below crosses the seam and refills wrap the cache file.
            _ = try ToneLoops.make(id: "tone440", frequency: 440, seconds: 2, in: daemon.userSoundscapes)
            let process = try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone440")
            let log = graph.logDirectory.appendingPathComponent("soundscaped.log")
            try waitUntil(timeout: .seconds(10), "the reader lent to the data thread (a debug line in \(log.path))") {
                (try? String(contentsOf: log, encoding: .utf8))?.contains("the data thread refills from the PCM cache") == true
            }

            // A quiet window: no client comes or goes (a recorder's node and links
            // would be news to our graph monitor, on the loop thread). It opens once the
            // commands' own timers are spent: each answer bounds its wait for the state
            // write with a 1 s timer (StateKeeper.saved(within:)), and that timer wakes
            // the loop once, a second after the command, even when the write was quick.
            Thread.sleep(forTimeInterval: 1.2)
            let before = ProcFS.voluntarySwitches(of: process.pid)
            Thread.sleep(forTimeInterval: 4)
            let after = ProcFS.voluntarySwitches(of: process.pid)
            let clip = try graph.record(sink: "speaker", seconds: 1)
            #expect(
                clip.silentStretches(thresholdDB: -70, minMs: 5).filter { $0.lowerBound > 0.2 }.isEmpty,
                "no underrun while the data thread refills")
            let woken = after.compactMap { tid, entry -> (String, UInt64)? in
                let delta = entry.switches - (before[tid]?.switches ?? 0)
                return entry.name == "soundscaped-rt" || delta == 0 ? nil : (entry.name, delta)
            }
            // Before, the loop thread woke for every refill (about six in 4 s), libdispatch's monitor every second.
            #expect(
                woken.reduce(0) { $0 + $1.1 } <= 1,
                "threads other than the data thread woke: \(woken)\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            let dataThread = after.values.first { $0.name == "soundscaped-rt" }
            #expect(dataThread != nil, "threads: \(after.values.map(\.name))")
        }
    }

    @Test("volume changes the level by the cubic curve: 100 % → 50 % is -18 dB, → 25 % is -36 dB")
    func volumeFollowsCubicCurve() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone440", frequency: 440, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone440")

            let full = try graph.record(sink: "speaker", seconds: 1).rmsDB(from: 0.3, to: 1)
            #expect(abs(full - (-9.03)) < 1, "a 0.5 sine at 100 % should be -9 dBFS, got \(full)")

            let set = try daemon.must("volume", "50")
            #expect(set.stdout.contains("Volume 50%"))
            let half = try graph.record(sink: "speaker", seconds: 1).rmsDB(from: 0.3, to: 1)
            #expect(abs((full - half) - 18.06) < 0.5, "100 → 50 % dropped \(full - half) dB, expected 18.06")

            try daemon.must("volume", "-25")
            let quarter = try graph.record(sink: "speaker", seconds: 1).rmsDB(from: 0.3, to: 1)
            #expect(abs((full - quarter) - 36.12) < 0.5, "100 → 25 % dropped \(full - quarter) dB, expected 36.12")
            #expect(try daemon.must("volume").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "25%")
        }
    }

    @Test("a volume change ramps without a click")
    func volumeRampHasNoClick() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone440", frequency: 440, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone440")
            let recording = try graph.startRecording(sink: "speaker")
            try daemon.must("volume", "10")
            try daemon.must("volume", "100")
            try daemon.must("volume", "30")
            Thread.sleep(forTimeInterval: 0.3)  // let the last ramp be recorded
            let clip = try recording.stop().fromFirstSound()  // the recording's first cycle can be silent
            // A 440 Hz sine of amplitude 0.5 moves at most 0.029 per sample; a hard gain jump would move up to 0.45.
            #expect(clip.maxStep < 0.04, "largest sample step \(clip.maxStep) at \(clip.maxStepLocation)s")
        }
    }

    @Test("stop fades out to digital silence and leaves the stream inactive")
    func stopIsSilent() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone440", frequency: 440, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("play", "tone440")
            let recording = try graph.startRecording(sink: "speaker")
            let stop = try daemon.must("stop")
            #expect(stop.stdout.contains("Stopped"))
            // The fade is timed from its own start in the audio, not from the recording's
            // start: how long the CLI took to say "stop" is no part of the fade.
            try waitUntil(timeout: .seconds(5), "our node to stop running") {
                try graph.snapshot().node(named: "soundscaped")?.state != "running"
            }
            Thread.sleep(forTimeInterval: 0.5)  // a stretch of what follows the fade, to prove it silent
            let clip = try recording.stop()

            let fadeStart = try #require(clip.fadeStartTime(), "the recording holds no sound before the stop")
            // The last sample that is not exactly zero: from there on, digital silence.
            let lastSound = Double(try #require(clip.samples.lastIndex { $0 != 0 }) / clip.channels + 1) / Double(clip.sampleRate)
            #expect(lastSound - fadeStart < 0.35, "sound for \(lastSound - fadeStart)s after the fade began (fade is 250 ms)")
            #expect(
                clip.duration - lastSound > 0.4,
                "digital silence for only \(clip.duration - lastSound)s at the end: the stream did not stay silent")
            // From the first sound: the recording's first cycle can be silent (startRecording).
            #expect(clip.fromFirstSound().maxStep < 0.04, "the fade-out clicked: step \(clip.fromFirstSound().maxStep)")

            let status = try daemon.status()
            #expect(status["state"] as? String == "stopped")
            #expect(status["isPlaying"] as? Bool == false)
        }
    }

    @Test("switching soundscapes while playing crossfades with no gap and no click")
    func switchHasNoGap() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "low", frequency: 440, in: daemon.userSoundscapes)
            _ = try ToneLoops.make(id: "high", frequency: 660, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "low")
            let events = try daemon.followEvents()
            let recording = try graph.startRecording(sink: "speaker")
            Thread.sleep(forTimeInterval: 0.5)  // some of the first soundscape
            try daemon.must("play", "high")
            let changed = try events.next(reason: "soundscapeChanged")
            #expect(changed["soundscape"] as? String == "high")
            Thread.sleep(forTimeInterval: 1.5)  // the crossfade (600 ms) and some of the second
            let clip = try recording.stop()
            events.stop()

            // The monitor's first buffers after pw-record links can be empty; judge from 0.2 s on.
            let gaps = clip.silentStretches(thresholdDB: -30, minMs: 5).filter { $0.upperBound > 0.2 }
            #expect(gaps.isEmpty, "gaps: \(gaps)")
            let before = try #require(clip.estimatedFrequency(from: 0.1, to: 0.4))
            let after = try #require(clip.estimatedFrequency(from: clip.duration - 0.4, to: clip.duration - 0.1))
            #expect(abs(before - 440) < 5 && abs(after - 660) < 5, "pitch \(before) Hz → \(after) Hz")
            #expect(clip.slice(from: 0.2).maxStep < 0.08, "the switch clicked: step \(clip.maxStep) at \(clip.maxStepLocation)s")
            #expect(try daemon.status()["soundscape"] as? String == "high")
        }
    }
}
