import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The worst hour of a session: PipeWire killed and restarted, frozen, or not
/// there at all. The daemon degrades, keeps answering, and recovers by itself.
@Suite("Self-healing", .serialized, .timeLimit(.minutes(2)))
struct SelfHealingTests {
    static func openDescriptors(_ pid: Int32) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    static func residentKilobytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("kill -9 of pipewire and wireplumber, ten times: audio is back within 2 s of the server's return, no leaks")
    func survivesServerKills() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let process = try daemon.start()
            try daemon.must("play")
            let events = try daemon.followEvents()
            var samples: [(fds: Int, rss: Int)] = []
            var recoveries: [Duration] = []

            for cycle in 1...10 {
                graph.killWirePlumber(signal: SIGKILL)
                graph.killPipeWire(signal: SIGKILL)
                let lost = try events.next(reason: "serverLost")
                #expect(lost["state"] as? String == "recovering")
                // The socket keeps working while the server is away.
                let health = try daemon.ctl("health")
                #expect(health.status == 1 && health.stdout.contains("FAIL pipewireConnected"), "cycle \(cycle): \(health)")

                try graph.restartPipeWire()
                try graph.createNullSink(name: "speaker")
                let back = ContinuousClock.now
                try waitUntil(timeout: .seconds(5), "cycle \(cycle): playing again after PipeWire's return") {
                    try daemon.status()["isPlaying"] as? Bool == true
                }
                recoveries.append(ContinuousClock.now - back)
                _ = try events.next(reason: "serverRestored")
                let level = try graph.record(sink: "speaker", seconds: 0.6).rmsDB(from: 0.2, to: 0.6)
                #expect(level > -60, "cycle \(cycle): silent after recovery (\(level) dBFS)")
                #expect(try daemon.ctl("health").status == 0, "cycle \(cycle): still unhealthy")
                samples.append((Self.openDescriptors(process.pid), Self.residentKilobytes(process.pid)))
            }
            #expect(process.isRunning)
            #expect(recoveries.allSatisfy { $0 < .seconds(2) }, "recovery times: \(recoveries)")
            // Compare after warm-up (cycle 3) with the end: a leak grows with every cycle.
            let (early, late) = (samples[2], samples[9])
            #expect(late.fds <= early.fds + 2, "file descriptors grew: \(samples.map(\.fds))")
            #expect(late.rss - early.rss < 8_000, "RSS grew: \(samples.map(\.rss)) kB")
            events.stop()
        }
    }

    @Test("a frozen PipeWire (SIGSTOP) is reported as stalled and unhealthy while the socket answers; SIGCONT recovers")
    func detectsAStall() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            try daemon.must("play")
            let events = try daemon.followEvents()

            graph.killPipeWire(signal: SIGSTOP)
            defer { graph.killPipeWire(signal: SIGCONT) }
            let stalled = try events.next(reason: "stalled", timeout: .seconds(8))
            #expect(stalled["state"] as? String == "recovering")
            let health = try daemon.ctl("health", "--json")
            #expect(health.status == 1)
            #expect(health.stdout.contains(#""name":"audioFlowing","ok":false"#), "\(health.stdout)")
            #expect(try daemon.ctl("status").succeeded, "the socket must answer while PipeWire is frozen")

            graph.killPipeWire(signal: SIGCONT)
            let recovered = try events.next(reason: "recovered", timeout: .seconds(15))
            #expect(recovered["state"] as? String == "playing")
            try waitUntil(timeout: .seconds(5), "health to turn good again") { try daemon.ctl("health").status == 0 }
            let level = try graph.record(sink: "speaker", seconds: 0.6).rmsDB(from: 0.2, to: 0.6)
            #expect(level > -60, "silent after recovery (\(level) dBFS)")
            events.stop()
        }
    }

    /// The server froze, not our stream: nothing of ours needs replacing, and
    /// tearing it down would only delay the sound once the server resumes.
    /// Timed from SIGCONT to the daemon's `recovered` (its first cycle). The
    /// sink cannot time our part: after a 4.5 s freeze PipeWire 0.3.65 itself
    /// leaves the null sink silent for a while, with pw-play as the player too
    /// (0.20, 0.84 and 1.99 s in three runs of six, 2026-11-24), which made
    /// this test fail one run in three when it held the sink to 0.5 s. The
    /// sink must carry the tone again, within a bound, and the stream must
    /// never have been replaced.
    @Test("after a frozen PipeWire resumes, audio is back within 0.5 s of SIGCONT", arguments: [3.0, 4.5, 8.0])
    func recoversQuicklyFromAFreeze(seconds: Double) throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone", frequency: 440, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("play", "tone")
            let events = try daemon.followEvents()

            graph.killPipeWire(signal: SIGSTOP)
            Thread.sleep(forTimeInterval: seconds)  // the freeze being tested, not a synchronisation
            let resumed = ContinuousClock.now
            graph.killPipeWire(signal: SIGCONT)
            if seconds >= 4 {
                // Long enough for the stall to be noticed (3 s without a cycle, and the server not
                // answering): it is news, and so is its end.
                let stalled = try events.next(reason: "stalled", timeout: .seconds(2))
                #expect(stalled["message"] as? String == "PipeWire does not answer; waiting for it")
                _ = try events.next(reason: "recovered", timeout: .seconds(5))
                let back = ContinuousClock.now - resumed
                #expect(back < .milliseconds(500), "recovered \(back) after SIGCONT (a \(seconds) s freeze)")
            }
            try waitUntil(timeout: .seconds(5), "audio to flow again") { try daemon.status()["isPlaying"] as? Bool == true }
            try waitUntil(timeout: .seconds(5), "the tone at the sink again after a \(seconds) s freeze") {
                try graph.record(sink: "speaker", seconds: 0.4).rmsDB(from: 0.15, to: 0.4) > -30
            }
            let log = graph.logTail(lines: 400)
            #expect(
                !log.contains("recreating the stream") && !log.contains("reactivating the stream"),
                "the stream was replaced for a frozen server")
            events.stop()
        }
    }

    @Test("the daemon starts without PipeWire, serves its socket, and plays once PipeWire appears")
    func startsWithoutPipeWire() throws {
        try PipeWireGraph.withGraph { graph in
            graph.killWirePlumber(signal: SIGKILL)
            graph.killPipeWire(signal: SIGKILL)
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let play = try daemon.ctl("play")
            #expect(play.status == 0, "play is accepted and remembered: \(play)")
            #expect(play.stderr.contains("will play as soon as audio output is available"), "\(play.stderr)")
            let health = try daemon.ctl("health")
            #expect(health.status == 1 && health.stdout.contains("FAIL pipewireConnected"), "\(health)")

            try graph.restartPipeWire()
            try graph.createNullSink(name: "speaker")
            try waitUntil(timeout: .seconds(15), "playback to start once PipeWire is there") {
                try daemon.status()["isPlaying"] as? Bool == true
            }
            #expect(try daemon.ctl("health").status == 0)
        }
    }

    @Test("soundscapectl health: 0 healthy, 1 unhealthy naming the check (a full disk), 2 unreachable")
    func healthExitCodes() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            // The state lives on a small tmpfs, so the test can fill the disk for real.
            try FileManager.default.createDirectory(at: daemon.stateDirectory, withIntermediateDirectories: true)
            try ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", daemon.stateDirectory.path])
                .requireSuccess()
            defer { _ = try? ChildProcess.run(["umount", "-l", daemon.stateDirectory.path]) }
            try daemon.start()
            let healthy = try daemon.ctl("health")
            #expect(healthy.status == 0 && healthy.stdout.hasPrefix("healthy"), "\(healthy)")
            try daemon.must("play")
            #expect(try daemon.ctl("health").status == 0)

            let filler = daemon.stateDirectory.appendingPathComponent("filler")
            _ = try ChildProcess.run(["dd", "if=/dev/zero", "of=\(filler.path)", "bs=4k"])
            let unhealthy = try daemon.ctl("health", "--json")
            #expect(unhealthy.status == 1)
            #expect(unhealthy.stdout.contains(#""name":"stateStoreWritable","ok":false"#), "\(unhealthy.stdout)")
            // A full disk degrades; it does not stop the daemon or the sound.
            try daemon.must("volume", "40")
            #expect(try daemon.status()["isPlaying"] as? Bool == true)

            try FileManager.default.removeItem(at: filler)
            #expect(try daemon.ctl("health").status == 0, "health did not recover once space was freed")

            try daemon.stop()
            #expect(try daemon.ctl("health").status == 2)
        }
    }
}
