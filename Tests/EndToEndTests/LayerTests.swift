import Foundation
import Testing
import TestSupport

/// Layers and the sleep timer (issue 39), heard at the sink of a private graph:
/// two tones of known level stand in for soundscapes, so a level says what plays.
@Suite(.serialized) struct LayerTests {
    /// The layers in a status, as `[id: level]`.
    static func layers(_ status: [String: Any]) -> [String: Int] {
        let list = status["layers"] as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { layer in
                (layer["id"] as? String).flatMap { id in (layer["level"] as? Int).map { (id, $0) } }
            })
    }

    /// A daemon on the graph's sink `speaker`, at volume 80, with two tones as loud as each
    /// other for soundscapes: low (300 Hz) and high (750 Hz).
    static func twoTones(on graph: PipeWireGraph) throws -> Soundscaped {
        try graph.createNullSink(name: "speaker")
        let daemon = try Soundscaped(graph: graph)
        _ = try ToneLoops.make(id: "low", frequency: 300, amplitude: 0.3, in: daemon.userSoundscapes)
        _ = try ToneLoops.make(id: "high", frequency: 750, amplitude: 0.3, in: daemon.userSoundscapes)
        try daemon.start()
        try daemon.must("volume", "80")
        return daemon
    }

    /// `ID=LEVEL` is cut at the "=" byte: a combining mark after it belongs to the level
    /// (refused as one), not to an id. Refused before any daemon is asked.
    @Test func aLevelAfterAMarkedEqualsSignIsReadAsTheLevel() throws {
        let result = try ChildProcess.run(
            [try ProductLocator.soundscapectl().path, "play", "rain=\u{306}40", "--socket", "/nonexistent/control.sock"])
        #expect(result.exitStatus == .exited(64), "\(result)")
        #expect(result.stderr.contains("the level of 'rain' must be 0-100"), "\(result)")
    }

    @Test("a layer added is heard on top; taken out, the level is back; a restart resumes the mix")
    func layersAtTheSink() throws {
        try PipeWireGraph.withGraph { graph in
            let daemon = try Self.twoTones(on: graph)
            try daemon.must("play", "low")
            let events = try daemon.followEvents()
            defer { events.stop() }
            let single = try graph.record(sink: "speaker", seconds: 1).rmsDB(from: 0.2)
            #expect(single > -30, "the single layer is heard: \(single) dBFS")

            // A second tone as loud: +3 dB in power. The layer fades in over 600 ms from the
            // command, which the window below leaves out.
            try daemon.must("layer", "high", "100")
            let added = try events.next(reason: "layersChanged")
            #expect(added["message"] as? String == "low + high")
            let mixed = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(abs(mixed - single - 3) < 1, "two equal layers are 3 dB louder: \(single) → \(mixed) dBFS")
            #expect(Self.layers(try daemon.status()) == ["low": 100, "high": 100])

            try daemon.must("layer", "high", "off")
            try events.next(reason: "layersChanged")
            let back = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(abs(back - single) < 0.5, "the level is back: \(single) → \(back) dBFS")
            #expect(Self.layers(try daemon.status()) == ["low": 100])

            // A mix played whole, then a restart: the same layers at the same levels.
            try daemon.must("play", "low", "high=50")
            let half = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(half > single + 0.05 && half < mixed - 1, "a layer at 50 adds a little: \(single) < \(half) < \(mixed)")
            try daemon.stop()
            try daemon.start()
            try waitUntil(timeout: .seconds(10), "the restarted daemon to play again") {
                (try? daemon.status())?["isPlaying"] as? Bool == true
            }
            #expect(Self.layers(try daemon.status()) == ["low": 100, "high": 50])
            let resumed = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(abs(resumed - half) < 0.5, "the mix is resumed as it was: \(half) → \(resumed) dBFS")

            // Refused, with nothing changed: a seventh layer is not possible with two, but the last one out is.
            try daemon.must("play", "low")
            let last = try daemon.ctl("layer", "low", "off")
            #expect(last.status == 1)
            #expect(last.stderr.contains("'low' is the only layer"))
            #expect(Self.layers(try daemon.status()) == ["low": 100])
        }
    }

    @Test("a sleep timer fades to silence, the signer runs on untouched, and play brings the sound back")
    func sleepKeepsTheSigner() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph, arguments: ["--signer-command", "/bin/sleep 600"])
            _ = try ToneLoops.make(id: "low", frequency: 300, amplitude: 0.3, in: daemon.userSoundscapes)
            try daemon.start()
            let events = try daemon.followEvents()
            defer { events.stop() }
            try daemon.must("play", "low")
            try events.next(reason: "signerStarted")
            let signer = { () throws -> Int? in (try daemon.status()["signer"] as? [String: Any])?["pid"] as? Int }
            let pid = try #require(try signer(), "the signer host runs")

            // 3 s: full for 2 s, then fading over the last second.
            let recording = try graph.startRecording(sink: "speaker")
            let asked = ContinuousClock.now
            try daemon.must("sleep", "3s")
            #expect(try daemon.status()["sleep"].flatMap { ($0 as? [String: Any])?["state"] as? String } == "counting")
            let asleep = try events.next(timeout: .seconds(8), "the interruption when the time is up") {
                $0["reason"] as? String == "interrupted"
            }
            let fellAsleep = ContinuousClock.now - asked
            let clip = try recording.stop()
            #expect(asleep["cause"] as? String == "asleep")
            #expect(fellAsleep >= .seconds(3) && fellAsleep < .seconds(4.5), "asleep after \(fellAsleep)")

            // The recording began before the command; the sound's last moment is the fade's end.
            let end = try #require(clip.lastNonSilentTime(thresholdDB: -70), "nothing was heard before the sleep")
            let start = end - 3
            let full = clip.rmsDB(from: max(start + 0.3, 0), to: start + 1.8)
            let fading = clip.rmsDB(from: start + 2.45, to: start + 2.6)
            #expect(fading < full - 6 && fading > full - 40, "half way through the fade: \(full) → \(fading) dBFS")
            let levels = clip.slice(from: start + 2, to: end).windowedRMS(windowMs: 50)
            #expect(zip(levels, levels.dropFirst()).allSatisfy { $1 <= $0 * 1.05 }, "the fade only falls: \(levels)")

            let status = try daemon.status()
            #expect(status["isPlaying"] as? Bool == false)
            #expect(status["wantsPlaying"] as? Bool == true)
            #expect(status["interruptions"] as? [String] == ["asleep"])
            #expect(try signer() == pid, "the signer host runs on, the same process")
            #expect(try graph.record(sink: "speaker", seconds: 0.5).peakDB < -90, "silent while asleep")

            try daemon.must("play")
            let woken = try graph.record(sink: "speaker", seconds: 1.2).rmsDB(from: 0.6)
            #expect(abs(woken - full) < 1, "play brings the sound back at its level: \(full) → \(woken) dBFS")
            #expect(try daemon.status()["sleep"] is NSNull)
            #expect(try signer() == pid)
        }
    }
}
