import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Calls and devices on a real graph: a Communication stream pauses (or
/// ducks) the soundscape and its end — however it ends — resumes it; the
/// audio follows the default sink, survives its sink vanishing, and never
/// plays into a call route.
@Suite("Interruptions and routes", .serialized, .timeLimit(.minutes(1)))
struct InterruptionTests {
    /// A daemon playing a steady 440 Hz tone at 100 % on `speaker`, with a second sink `phone`
    /// where fake calls play, so `speaker` carries only our sound.
    struct Setup {
        let graph: PipeWireGraph
        let daemon: Soundscaped
        let call: URL

        init(graph: PipeWireGraph, extraSinks: [String] = ["phone"]) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            for sink in extraSinks { try graph.createNullSink(name: sink) }
            try graph.setDefaultSink(name: "speaker")
            daemon = try Soundscaped(graph: graph)
            _ = try ToneLoops.make(id: "tone", frequency: 440, in: daemon.userSoundscapes)
            call = graph.directory.appendingPathComponent("call.wav")
            try ChildProcess.run([
                "sox", "-n", "-b", "16", "-r", "48000", "-c", "1", call.path,
                "synth", "60", "sine", "300", "vol", "0.3",
            ]).requireSuccess()
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone")
        }

        /// A fake call: a Communication-role stream playing into `phone`.
        func startCall(role: String = "Communication") throws -> ChildProcess {
            try graph.play(call, mediaRole: role, target: "phone")
        }

        func level(on sink: String = "speaker", seconds: Double = 0.8) throws -> Float {
            try graph.record(sink: sink, seconds: seconds).rmsDB(from: 0.25, to: seconds)
        }
    }

    @Test("a call pauses the soundscape and its end resumes it, also when the call app is killed with SIGKILL")
    func callPausesAndResumes() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            let events = try setup.daemon.followEvents()
            #expect(try setup.level() > -15, "the tone should play before the call")

            for ending in [SIGTERM, SIGKILL] {
                let call = try setup.startCall()
                let interrupted = try events.next(reason: "interrupted")
                #expect(interrupted["cause"] as? String == "communicationStream")
                #expect(interrupted["state"] as? String == "interrupted")
                #expect((interrupted["interruptions"] as? [String]) == ["communicationStream"])
                // Recorded from the event on, leaving out the fade-out (250 ms).
                let during = try graph.record(sink: "speaker", seconds: 1).slice(from: 0.4)
                #expect(during.peak < 0.001, "the soundscape still plays during the call (peak \(during.peak))")

                call.signal(ending)
                let resumed = try events.next(reason: "resumed")
                #expect(resumed["state"] as? String == "playing")
                #expect(try setup.level() > -15, "the tone did not come back after the call ended by signal \(ending)")
            }
            events.stop()
        }
    }

    @Test("duck mode lowers the level by the set amount during a call and restores it after")
    func duckLowersTheLevel() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("set", "interruption-mode", "duck")
            try setup.daemon.must("set", "duck-level", "50")
            let events = try setup.daemon.followEvents()
            let before = try setup.level()

            let call = try setup.startCall(role: "Phone")
            let ducked = try events.next(reason: "interrupted")
            #expect(ducked["ducked"] as? Bool == true)
            #expect(ducked["state"] as? String == "playing")
            let during = try setup.level()
            #expect(abs((before - during) - 18.06) < 1, "ducking to 50 % dropped \(before - during) dB, expected 18")

            call.signal(SIGTERM)
            _ = try events.next(reason: "resumed")
            let after = try setup.level()
            #expect(abs(after - before) < 1, "level after the call \(after) dBFS, before \(before)")
            events.stop()
        }
    }

    @Test("switching the default sink moves the audio there")
    func followsTheDefaultSink() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, extraSinks: ["headset"])
            let events = try setup.daemon.followEvents()
            try graph.setDefaultSink(name: "headset")
            let changed = try events.next(reason: "routeChanged")
            #expect(changed["route"] as? String == "headset")
            #expect(changed["cause"] as? String == "newDefault")
            #expect(changed["message"] as? String == "speaker → headset")
            #expect(try setup.level(on: "headset") > -15, "no audio on the new default")
            #expect(
                try graph.record(sink: "speaker", seconds: 0.6).slice(from: 0.3).peak < 0.001,
                "the old sink still gets audio")
            events.stop()
        }
    }

    @Test("when our sink disappears the audio continues on the other one; with none left, routeChangeFailed until one appears")
    func survivesTheSinkVanishing() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, extraSinks: ["headset"])
            let events = try setup.daemon.followEvents()
            try graph.destroyNode(name: "speaker")
            let changed = try events.next(reason: "routeChanged")
            #expect(changed["route"] as? String == "headset")
            #expect(changed["cause"] as? String == "deviceUnavailable")
            #expect(try setup.level(on: "headset") > -15, "no audio on the remaining sink")

            try graph.destroyNode(name: "headset")
            let failed = try events.next(reason: "routeChangeFailed")
            #expect(failed["state"] as? String == "recovering")
            #expect(setup.daemon.process?.isRunning == true)

            try graph.createNullSink(name: "speaker")
            let resumed = try events.next(reason: "resumed", timeout: .seconds(10))
            #expect(resumed["route"] as? String == "speaker")
            #expect(try setup.level() > -15, "no audio once a sink came back")
            events.stop()
        }
    }

    @Test("a Bluetooth call-profile sink as default pauses us; back to a normal sink resumes")
    func callRouteSinkPauses() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, extraSinks: [])
            try graph.createNullSink(
                name: "bluez_output.headset-hfp",
                properties: [
                    "api.bluez5.profile": "headset-head-unit", "device.intended-roles": "Communication",
                ])
            let events = try setup.daemon.followEvents()
            try graph.setDefaultSink(name: "bluez_output.headset-hfp")
            let interrupted = try events.next(reason: "interrupted")
            #expect(interrupted["cause"] as? String == "callRoute")
            // Recorded from the event on, leaving out the fade-out (250 ms).
            #expect(
                try graph.record(sink: "bluez_output.headset-hfp", seconds: 1).slice(from: 0.4).peak < 0.001,
                "the soundscape plays into a call route")

            try graph.setDefaultSink(name: "speaker")
            _ = try events.next(reason: "resumed")
            #expect(try setup.level() > -15)
            events.stop()
        }
    }

    @Test("a pinned sink wins over the default, and wins again when it returns; preferences persist")
    func pinnedSink() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, extraSinks: ["headset"])
            let events = try setup.daemon.followEvents()
            let pinned = try setup.daemon.must("set", "pinned-sink", "headset")
            #expect(pinned.stdout.contains("pinned-sink        headset"), "\(pinned.stdout)")
            #expect(try events.next(reason: "routeChanged")["route"] as? String == "headset")

            try graph.destroyNode(name: "headset")
            let away = try events.next(reason: "routeChanged")
            #expect(away["route"] as? String == "speaker" && away["cause"] as? String == "deviceUnavailable")
            try graph.createNullSink(name: "headset")
            let back = try events.next(reason: "routeChanged")
            #expect(back["route"] as? String == "headset" && back["cause"] as? String == "pinnedDeviceReturned")
            events.stop()
            // Targets wait until the server has registered our node: metadata about
            // an id it has only reserved is refused with ESTALE.
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(!log.contains("PipeWire error"), "\(log)")

            let bad = try setup.daemon.ctl("set", "interruption-mode", "loud")
            // A value no daemon accepts is a usage error (64), whoever finds it (README, "Exit status").
            #expect(bad.status == 64 && bad.stderr.contains("interruption-mode must be one of pause, duck, ignore"), "\(bad)")
            try setup.daemon.must("set", "auto-resume", "off")
            try setup.daemon.stop()
            try setup.daemon.start()
            let shown = try setup.daemon.must("preferences", "--json").stdout
            #expect(shown.contains(#""autoResume":false"#) && shown.contains(#""pinnedSink":"headset""#), "\(shown)")
        }
    }

    @Test("with auto-resume off, the end of a call leaves the session paused, and play resumes it")
    func autoResumeOff() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("set", "auto-resume", "off")
            let events = try setup.daemon.followEvents()
            let call = try setup.startCall()
            _ = try events.next(reason: "interrupted")
            call.signal(SIGTERM)
            let paused = try events.next(reason: "paused")
            #expect(paused["message"] as? String == "the interruption ended; auto-resume is off")
            let status = try setup.daemon.status()
            #expect(status["state"] as? String == "paused")
            #expect(status["wantsPlaying"] as? Bool == false)
            // The call's own fade-out may still be running when it ends so fast: wait for it.
            try waitUntil(timeout: .seconds(5), "our node to stop running while paused") {
                try graph.snapshot().node(named: "soundscaped")?.state != "running"
            }
            #expect(try graph.record(sink: "speaker", seconds: 0.6).peak == 0, "sound while paused")
            try setup.daemon.must("play")
            _ = try events.next(reason: "resumed")
            #expect(try setup.level() > -15, "play did not bring the tone back")
            events.stop()
        }
    }

    @Test("play during a duck switches at the ducked level")
    func switchDuringADuckStaysDucked() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            _ = try ToneLoops.make(id: "tone2", frequency: 660, in: setup.daemon.userSoundscapes)
            try setup.daemon.must("set", "interruption-mode", "duck")
            try setup.daemon.must("set", "duck-level", "10")
            let events = try setup.daemon.followEvents()
            let full = try setup.level()

            let call = try setup.startCall()
            let ducked = try events.next(reason: "interrupted")
            #expect(ducked["ducked"] as? Bool == true)
            let duckedLevel = try setup.level(seconds: 1.2)
            try setup.daemon.must("play", "tone2")
            let switched = try events.next(reason: "soundscapeChanged")
            #expect(switched["ducked"] as? Bool == true)
            // Past the 600 ms crossfade: only the new soundscape plays.
            let afterSwitch = try setup.level(seconds: 1.4)
            // Duck level 10 % on the cubic curve is -60 dB below the user's volume.
            #expect(full - afterSwitch > 40, "after a switch during the duck: \(afterSwitch) dBFS, full \(full), ducked \(duckedLevel)")
            #expect(abs(afterSwitch - duckedLevel) < 6, "the switch left the duck: \(afterSwitch) dBFS against \(duckedLevel)")

            call.signal(SIGTERM)
            _ = try events.next(reason: "resumed")
            #expect(abs(try setup.level() - full) < 1.5, "the level after the call is not the user's")
            events.stop()
        }
    }
}
