import Foundation
import Testing
import TestSupport

/// The signer-down cue and a mix (issue 39), heard at the sink: while signing is down
/// the cue replaces every layer, and when it is up the whole mix comes back. Two tones
/// stand in for the layers, so the power at their frequencies says which of them plays;
/// the cue is told by TestSupport's `CueClassifier`, as the real-signer check tells it.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LayerCueTests {
    static let tones = (low: 300.0, high: 500.0)
    /// 100 ms windows: 10 Hz apart, the layers' tones are far from the cue's (E5, A5 and their octaves).
    static let frames = 4800

    /// Per 100 ms window of `clip`: the cue classifier's kind, and each layer tone's share of the power.
    static func windows(_ clip: AudioClip, cueTones: [Double]) -> [(kind: CueClassifier.Kind, low: Double, high: Double)] {
        let samples = clip.channel(0)
        var cue = CueClassifier(frames: frames, tones: cueTones)
        var low = CueClassifier(frames: frames, tones: [tones.low])
        var high = CueClassifier(frames: frames, tones: [tones.high])
        return stride(from: 0, to: samples.count - frames + 1, by: frames).map { start in
            let window = Array(samples[start..<start + frames])
            return (cue.classify(window).kind, low.classify(window).share, high.classify(window).share)
        }
    }

    @Test("signing down: the cue replaces the whole mix at the sink; signing up: the mix comes back")
    func cueReplacesTheMix() throws {
        let cueTones = try CueClassifier.signerDownTones()
        try PipeWireGraph.withGraph { graph in
            // A health command that passes while the file `ok` is in the signer's directory.
            let setup = try SignerTests.Setup(
                graph: graph,
                daemonArguments: [
                    "--signer-health-command", "/bin/sh -c 'test -f ok'", "--signer-health-interval", "0.2",
                    "--signer-health-timeout", "1", "--signer-health-retries", "2", "--signer-restart-delay", "0.1",
                ],
                prepare: { daemon in
                    _ = try ToneLoops.make(id: "low", frequency: Int(Self.tones.low), amplitude: 0.3, in: daemon.userSoundscapes)
                    _ = try ToneLoops.make(id: "high", frequency: Int(Self.tones.high), amplitude: 0.3, in: daemon.userSoundscapes)
                })
            let ok = setup.records.appendingPathComponent("ok")
            #expect(FileManager.default.createFile(atPath: ok.path, contents: nil))
            let daemon = setup.daemon
            let events = try daemon.followEvents()
            defer { events.stop() }
            try daemon.must("volume", "80")
            try daemon.must("play", "low", "high=100")
            try waitUntil(timeout: .seconds(10), "the first health check to pass") {
                (try daemon.status()["signer"] as? [String: Any])?["health"] as? String == "healthy"
            }

            // Both layers at the sink, no cue.
            let mixed = Self.windows(try graph.record(sink: "speaker", seconds: 1.6).slice(from: 0.9), cueTones: cueTones)
            #expect(!mixed.isEmpty)
            #expect(mixed.allSatisfy { $0.low > 0.3 && $0.high > 0.3 }, "both layers play: \(mixed)")
            #expect(!mixed.contains { $0.kind == .cue }, "no cue while signing is up: \(mixed)")

            // Signing stops: the cue, and neither layer.
            try FileManager.default.removeItem(at: ok)
            #expect(try events.next(reason: "signerDown", timeout: .seconds(10))["message"] as? String == "unhealthy")
            try waitUntil(timeout: .seconds(5), "status to say the cue plays") {
                try daemon.status()["cuePlaying"] as? Bool == true
            }
            #expect(LayerTests.layers(try daemon.status()) == ["low": 100, "high": 100], "the mix is kept for later")
            // Past the 600 ms crossfade, then long enough for the cue's first chime (after its 0.7 s of silence).
            let down = Self.windows(try graph.record(sink: "speaker", seconds: 3.5).slice(from: 0.7), cueTones: cueTones)
            #expect(down.contains { $0.kind == .cue }, "the cue's chime is heard: \(down)")
            #expect(down.allSatisfy { $0.low < 0.01 && $0.high < 0.01 }, "no layer is heard under the cue: \(down)")

            // Signing is back: the whole mix again, without the cue.
            #expect(FileManager.default.createFile(atPath: ok.path, contents: nil))
            _ = try events.next(reason: "signerRestored", timeout: .seconds(10))
            try waitUntil(timeout: .seconds(5), "status to say the mix plays again") {
                let status = try daemon.status()
                return status["cuePlaying"] as? Bool == false && status["isPlaying"] as? Bool == true
            }
            let back = Self.windows(try graph.record(sink: "speaker", seconds: 1.6).slice(from: 0.9), cueTones: cueTones)
            #expect(!back.isEmpty)
            #expect(back.allSatisfy { $0.low > 0.3 && $0.high > 0.3 }, "both layers are back: \(back)")
            #expect(!back.contains { $0.kind == .cue }, "the cue is gone: \(back)")
            #expect(LayerTests.layers(try daemon.status()) == ["low": 100, "high": 100])
        }
    }
}
