import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What holds for one soundscape holds for a mix (issue 39), heard at the sink: a
/// call ducks or pauses every layer and its end brings them all back, volume off lets
/// the sink suspend, and each layer's loop seam stays seamless under the others.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LayerInterruptionTests {
    /// Two tones as a mix, `low` (300 Hz, a 2 s loop) and `high` (750 Hz, a 3 s loop,
    /// so the two seams fall apart), playing at volume 100 on `speaker`, with `phone`
    /// beside it for the calls.
    struct Setup {
        let graph: PipeWireGraph
        let daemon: Soundscaped
        let low: URL
        let high: URL

        init(graph: PipeWireGraph) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            try graph.createNullSink(name: "phone")
            try graph.setDefaultSink(name: "speaker")
            daemon = try Soundscaped(graph: graph)
            low = try ToneLoops.make(id: "low", frequency: 300, amplitude: 0.3, seconds: 2, in: daemon.userSoundscapes)
            high = try ToneLoops.make(id: "high", frequency: 750, amplitude: 0.3, seconds: 3, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "low", "high")
        }

        /// A fake call of `role` on `phone`: a 300 Hz tone for a minute.
        func startCall(role: String) throws -> ChildProcess {
            let call = graph.directory.appendingPathComponent("call.wav")
            if !FileManager.default.fileExists(atPath: call.path) {
                try ChildProcess.run([
                    "sox", "-n", "-b", "16", "-r", "48000", "-c", "1", call.path, "synth", "60", "sine", "300", "vol", "0.3",
                ]).requireSuccess()
            }
            return try graph.play(call, mediaRole: role, target: "phone")
        }

        /// The speaker's level over `seconds`, leaving out the first `settle` (a fade under way
        /// when the recording began).
        func level(seconds: Double = 1.2, settle: Double = 0.6) throws -> Float {
            try graph.record(sink: "speaker", seconds: seconds).rmsDB(from: settle)
        }

        /// Both tones are in `clip`: its level at each of their frequencies, by a one-bin DFT.
        static func tonesHeard(in clip: AudioClip, from start: Double) -> (low: Float, high: Float) {
            (clip.toneLevelDB(frequency: 300, from: start), clip.toneLevelDB(frequency: 750, from: start))
        }
    }

    @Test("a call ducks every layer of a mix by the duck level, or pauses all of it; its end brings both back")
    func callsTakeTheWholeMix() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            let events = try setup.daemon.followEvents()
            defer { events.stop() }
            let full = try graph.record(sink: "speaker", seconds: 1.2)
            let before = Setup.tonesHeard(in: full, from: 0.2)
            #expect(before.low > -20 && before.high > -20, "both layers play before the call: \(before)")

            // Duck to 50 %: the cubic volume curve's 0.5³, 18 dB down, for both tones alike.
            try setup.daemon.must("set", "interruption-mode", "duck")
            try setup.daemon.must("set", "duck-level", "50")
            var call = try setup.startCall(role: "Phone")
            let ducked = try events.next(reason: "interrupted")
            #expect(ducked["ducked"] as? Bool == true)
            let during = Setup.tonesHeard(in: try graph.record(sink: "speaker", seconds: 1.2), from: 0.6)
            #expect(abs(before.low - during.low - 18.06) < 1, "low ducked by \(before.low - during.low) dB, expected 18")
            #expect(abs(before.high - during.high - 18.06) < 1, "high ducked by \(before.high - during.high) dB, expected 18")
            call.signal(SIGTERM)
            try events.next(reason: "resumed")
            let unducked = Setup.tonesHeard(in: try graph.record(sink: "speaker", seconds: 1.2), from: 0.6)
            #expect(abs(unducked.low - before.low) < 1 && abs(unducked.high - before.high) < 1, "after the call: \(unducked), before \(before)")

            // Pause: the whole mix is silent during the call; both layers come back after it.
            try setup.daemon.must("set", "interruption-mode", "pause")
            call = try setup.startCall(role: "Communication")
            let paused = try events.next(reason: "interrupted")
            #expect(paused["state"] as? String == "interrupted")
            let silent = try graph.record(sink: "speaker", seconds: 1.2).slice(from: 0.6)
            #expect(silent.peak < 0.001, "the mix still plays during the call (peak \(silent.peak))")
            call.signal(SIGKILL)
            try events.next(reason: "resumed")
            let resumed = Setup.tonesHeard(in: try graph.record(sink: "speaker", seconds: 1.2), from: 0.6)
            #expect(abs(resumed.low - before.low) < 1 && abs(resumed.high - before.high) < 1, "after the call: \(resumed), before \(before)")
            #expect(LayerTests.layers(try setup.daemon.status()) == ["low": 100, "high": 100])
        }
    }

    @Test("volume off with a mix: the stream goes inactive and the sink suspends; raising it brings every layer")
    func volumeOffSuspendsTheSink() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("volume", "off")
            let status = try setup.daemon.status()
            #expect(status["interruptions"] as? [String] == ["muted"])
            #expect(LayerTests.layers(status) == ["low": 100, "high": 100])
            // Nothing links the sink now: WirePlumber suspends it after its idle timeout (5 s).
            try waitUntil(timeout: .seconds(12), "the sink to suspend at volume off with two layers") {
                (try? graph.snapshot().node(named: "speaker")?.state) == "suspended"
            }
            try setup.daemon.must("volume", "100")
            let back = Setup.tonesHeard(in: try graph.record(sink: "speaker", seconds: 1.5), from: 0.9)
            #expect(back.low > -20 && back.high > -20, "both layers after volume off: \(back)")
        }
    }

    @Test("each layer's loop seam is seamless under the other: no step above the two tones' own largest steps")
    func seamsStaySeamless() throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            let low = try ReferenceDecoder.decode(setup.low, into: graph.directory)
            let high = try ReferenceDecoder.decode(setup.high, into: graph.directory)
            // 6.5 s from the first sound on hold at least two seams of low and two of high.
            // A seam that skipped or repeated samples jumps the tone's phase: a step up to
            // twice its amplitude (0.6), against the bound of about 0.04.
            let clip = try graph.record(sink: "speaker", seconds: 7).slice(from: 0.5)
            #expect(clip.duration > 6.4, "the recording is \(clip.duration) s")
            #expect(clip.peak > 0.3, "both layers are playing (peak \(clip.peak))")
            let bound = (low.loopMaxStep + high.loopMaxStep) * 1.02
            let worst = try #require(clip.maxStepLocation)
            #expect(
                worst.value <= bound,
                "a step of \(worst.value) at \(worst.time) s (channel \(worst.channel)) > bound \(bound): a seam or a mix glitch")
        }
    }
}

extension AudioClip {
    /// The level (dB) of the sine at `frequency` from `start` to the end, in the first
    /// channel: the stretch's level and the tone's share of its power, by TestSupport's
    /// Goertzel filter (`CueClassifier`).
    func toneLevelDB(frequency: Double, from start: Double) -> Float {
        let samples = Array(channel(0)[frameIndex(at: start)...])
        var classifier = CueClassifier(frames: samples.count, rate: Double(sampleRate), tones: [frequency])
        let verdict = classifier.classify(samples)
        return Float(verdict.rmsDB + 10 * log10(max(verdict.share, 1e-12)))
    }
}
