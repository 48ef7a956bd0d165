import Foundation
import Testing
import TestSupport

/// Volume off is a silent keep-alive: the stream goes inactive, so the sink
/// can suspend (a running sink keeps a laptop's sound card powered), and the
/// daemon makes no audio wake-ups; the session goes on, and raising the
/// volume is audible within a second.
@Suite("Volume off on a private PipeWire graph", .serialized, .timeLimit(.minutes(1)))
struct SilentKeepAliveTests {
    @Test("at volume off the sink suspends and the daemon sleeps; raising it is audible within a second")
    func volumeOffIsASilentKeepAlive() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone", frequency: 440, in: daemon.userSoundscapes)
            let process = try daemon.start()
            try daemon.must("play", "tone")
            #expect(try daemon.status()["isPlaying"] as? Bool == true)

            let muted = try daemon.must("volume", "off")
            #expect(muted.status == 0)
            let status = try daemon.status()
            #expect(status["isPlaying"] as? Bool == false)
            #expect(status["wantsPlaying"] as? Bool == true)
            #expect(status["state"] as? String == "interrupted")
            #expect(status["interruptions"] as? [String] == ["muted"])

            // Nothing links the sink now: WirePlumber suspends it after its idle timeout (5 s).
            try waitUntil(timeout: .seconds(12), "the sink to suspend at volume off") {
                (try? graph.snapshot().node(named: "speaker")?.state) == "suspended"
            }
            // The answer's 1 s write bound has passed by now; from here the daemon has nothing to do.
            let before = ProcFS.voluntarySwitches(of: process.pid)
            Thread.sleep(forTimeInterval: 3)  // the quiet stretch being measured, not a synchronisation
            let after = ProcFS.voluntarySwitches(of: process.pid)
            let woken = after.compactMap { tid, entry -> (String, UInt64)? in
                let delta = entry.switches - (before[tid]?.switches ?? 0)
                return delta == 0 ? nil : (entry.name, delta)
            }
            #expect(woken.reduce(0) { $0 + $1.1 } < 3, "the daemon woke in 3 s at volume off: \(woken)")
            #expect(try graph.snapshot().node(named: "speaker")?.state == "suspended")

            // Back up: audible within a second of the command, timed from it.
            let recording = try graph.startRecording(sink: "speaker")
            let asked = ContinuousClock.now
            try daemon.must("volume", "30")
            Thread.sleep(forTimeInterval: 1.5)  // the window being recorded
            let stopped = ContinuousClock.now
            let clip = try recording.stop()
            let onset = try #require(clip.firstNonSilentTime(thresholdDB: -60), "no sound after raising the volume")
            // The clip ends when the recorder stopped: its first sound was that long before.
            let heardAfter = (stopped - asked) - .milliseconds(Int64((clip.duration - onset) * 1000))
            #expect(heardAfter < .seconds(1), "audible \(heardAfter) after raising the volume")
            #expect(try daemon.status()["isPlaying"] as? Bool == true)
        }
    }
}
