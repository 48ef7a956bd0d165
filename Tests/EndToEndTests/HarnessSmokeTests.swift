import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Smoke tests for the PipeWire test harness itself: a private graph comes up,
/// audio played into a null sink is recorded faithfully, default-sink
/// switching works, and nothing is left running afterwards.
@Suite("PipeWire harness smoke tests", .serialized, .timeLimit(.minutes(1)))
struct HarnessSmokeTests {
    @Test("A 440 Hz tone played into a null sink is recorded at -9 dBFS, with silence before it")
    func recordsTone() throws {
        try ExternalTools.require(ExternalTools.graphTools + ["pw-record", "pw-play", "sox"])
        let graph = PipeWireGraph()
        try graph.start()
        defer { graph.stop() }

        try graph.createNullSink(name: "speaker")
        let tone = graph.directory.appendingPathComponent("tone.wav")
        try ChildProcess.run([
            "sox", "-n", "-b", "16", "-r", "48000", "-c", "2", tone.path, "synth", "2", "sine", "440", "vol", "0.5",
        ]).requireSuccess()

        let recording = try graph.startRecording(sink: "speaker")
        let snapshot = try graph.snapshot()
        let speaker = try #require(snapshot.node(named: "speaker"))
        let recorderNodes = snapshot.nodes(ofProcess: recording.process.pid)
        #expect(snapshot.downstreamNodes(of: speaker.id).contains { recorderNodes.contains($0) })
        Thread.sleep(forTimeInterval: 0.3)  // known silence before the tone
        try graph.playToCompletion(tone)
        Thread.sleep(forTimeInterval: 0.2)
        let clip = try recording.stop()

        #expect(clip.sampleRate == 48000)
        #expect(clip.channels == 2)
        let start = try #require(clip.firstNonSilentTime(thresholdDB: -40), "tone not found in recording")
        let end = try #require(clip.lastNonSilentTime(thresholdDB: -40))
        #expect(abs((end - start) - 2.0) < 0.1, "tone lasted \(end - start) s")

        let expectedDB = AudioLevel.dBFS(0.5 / Float(2).squareRoot())  // -9.03
        let level = clip.rmsDB(from: start + 0.2, to: end - 0.2)
        #expect(abs(level - expectedDB) < 1, "tone level \(level) dBFS, expected \(expectedDB)")
        let frequency = try #require(clip.estimatedFrequency(from: start + 0.2, to: end - 0.2))
        #expect(abs(frequency - 440) < 5, "frequency \(frequency) Hz")

        // Silence before the tone is detected...
        let silences = clip.silentStretches(thresholdDB: -60, minMs: 100)
        let first = try #require(silences.first, "no silence found; stretches: \(silences)")
        #expect(first.lowerBound < 0.05 && first.upperBound <= start + 0.01 && first.upperBound > 0.2)
        // ...and there is no gap and no click inside it.
        let tonePart = (start + 0.05)..<(end - 0.05)
        let gaps = clip.silentStretches(thresholdDB: -40, minMs: 5).filter { $0.overlaps(tonePart) }
        #expect(gaps.isEmpty, "gaps inside the tone: \(gaps)")
        #expect(clip.slice(from: start, to: end).maxStep < 0.05)

        // The graph was isolated from the machine's hardware monitors.
        let wpLog = try String(
            contentsOf: graph.logDirectory.appendingPathComponent("wireplumber.log"), encoding: .utf8)
        #expect(!wpLog.contains("libcamera"), "hardware monitors should be disabled:\n\(wpLog)")

        let pids = graph.processIDs
        let directory = graph.directory
        #expect(pids.count >= 6)  // watchdog, dbus, pipewire, wireplumber, pw-record, pw-play
        graph.stop()
        #expect(graph.livingProcessIDs().isEmpty, "still alive: \(graph.livingProcessIDs())")
        for pid in pids {
            #expect(kill(pid, 0) != 0, "pid \(pid) still exists after stop()")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("setDefaultSink switches WirePlumber's default sink and defaultSink() reads it back")
    func switchesDefaultSink() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            try graph.createNullSink(name: "headset")
            #expect(
                try graph.nodes().filter { $0.mediaClass == "Audio/Sink" }.compactMap(\.name).sorted()
                    == ["headset", "speaker"])

            try graph.setDefaultSink(name: "headset")
            #expect(try graph.defaultSink() == "headset")
            #expect(try graph.configuredDefaultSink() == "headset")

            try graph.setDefaultSink(name: "speaker")
            #expect(try graph.defaultSink() == "speaker")

            try graph.destroyNode(name: "headset")
            #expect(try graph.snapshot().node(named: "headset") == nil)
        }
    }

    @Test("setDefaultSink gets there when PipeWire no longer tells the metadata's listeners of changes")
    func switchesDefaultSinkForDeafListeners() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            try graph.createNullSink(name: "headset")
            let listener = try graph.spawn("pw-metadata", ["-m", "-n", "default"], name: "listener", stdout: .capture)
            try #require(listener.nextLine(timeout: .seconds(5)) { $0.contains("key:'default.audio.sink'") } != nil)
            // module-metadata never takes a binding that went away before the
            // owner answered the server's ping off its count of bindings being
            // set up, and while that count is not zero it tells settled
            // listeners nothing. WirePlumber stopped, a reader binds and dies.
            let wirePlumber = try #require(graph.process(.wireplumber))
            wirePlumber.signal(SIGSTOP)
            let reader = try graph.spawn("pw-metadata", ["-n", "default"], name: "reader", stdout: .capture)
            try #require(reader.nextLine(timeout: .seconds(5)) { $0.hasPrefix("Found \"default\"") } != nil)
            // The reader printed that line as it sent the binding; nothing
            // tells when the server has taken it, so it is given a second.
            Thread.sleep(forTimeInterval: 1)
            reader.killNow()
            wirePlumber.signal(SIGCONT)

            try graph.setDefaultSink(name: "headset")
            #expect(try graph.defaultSink() == "headset")
            #expect(
                listener.nextLine(timeout: .milliseconds(500)) { $0.contains("headset") } == nil,
                "the listener heard the switch: the metadata did not go deaf, and setDefaultSink's reading anew went untried")
        }
    }

    @Test("PipeWire can be killed and restarted; WirePlumber comes back with it")
    func restartsPipeWire() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let oldPipeWire = try #require(graph.process(.pipewire))
            graph.killPipeWire(signal: SIGKILL)
            #expect(!oldPipeWire.isRunning)
            try waitUntil(timeout: .seconds(5), "WirePlumber to exit after losing PipeWire") {
                !graph.isRunning(.wireplumber)
            }

            try graph.restartPipeWire()
            #expect(graph.isRunning(.pipewire) && graph.isRunning(.wireplumber))
            #expect(try graph.snapshot().node(named: "speaker") == nil)  // sinks die with pipewire
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")

            try graph.restartWirePlumber()
            try graph.waitForDefaultSink("speaker")
        }
    }
}
