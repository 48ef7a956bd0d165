import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The desktop side on real parts: the real daemon and the real companion
/// (soundscaped-desktop) on the graph's private session bus, driven by
/// playerctl, Debian's MPRIS client. python-dbusmock stands in only for what a
/// headless machine lacks: a notification server, and logind on a private
/// system bus.
@Suite("Desktop: MPRIS, notifications, keep-awake", .serialized, .timeLimit(.minutes(1)))
struct DesktopTests {
    /// Debian's python3, which has python3-dbusmock (a python on PATH may be another one).
    static let systemPython = "/usr/bin/python3"

    struct Setup {
        let graph: PipeWireGraph
        let daemon: Soundscaped

        /// A daemon with a signer host named `signer` (a script, `body` its shell code)
        /// and two tone soundscapes, alpha (440 Hz) and beta (660 Hz).
        init(
            graph: PipeWireGraph, signer: String = "igloo-signer", body: String = "exec sleep infinity",
            arguments: [String] = [], environment: [String: String] = [:]
        ) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            try graph.createNullSink(name: "phone")
            try graph.setDefaultSink(name: "speaker")
            let script = graph.directory.appendingPathComponent(signer)
            try "#!/bin/sh\n\(body)\n".write(to: script, atomically: true, encoding: .utf8)
            chmod(script.path, 0o755)
            daemon = try Soundscaped(graph: graph, arguments: ["--signer-command", script.path] + arguments)
            _ = try ToneLoops.make(id: "alpha", frequency: 440, in: daemon.userSoundscapes)
            _ = try ToneLoops.make(id: "beta", frequency: 660, in: daemon.userSoundscapes)
            try daemon.start(environment: environment)
        }

        @discardableResult
        func startCompanion() throws -> ChildProcess {
            let companion = try graph.spawn(
                try ProductLocator.soundscapedDesktop().path,
                ["--socket", daemon.socket, "--log-level", "debug"],
                name: "soundscaped-desktop")
            try waitUntil(timeout: .seconds(10), "playerctl to list soundscaped\n\(graph.logTail(lines: 20))") {
                guard companion.isRunning else { throw HarnessError("the companion exited\n\(graph.logTail(lines: 20))") }
                return try graph.run(["playerctl", "-l"]).stdout.split(separator: "\n").contains("soundscaped")
            }
            return companion
        }

        func playerctl(_ arguments: String...) throws -> String {
            let result = try graph.run(["playerctl", "-p", "soundscaped"] + arguments)
            guard result.succeeded else { throw HarnessError("playerctl \(arguments.joined(separator: " ")) failed: \(result)") }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func waitForPlayerctl(_ arguments: String..., toSay expected: String, timeout: Duration = .seconds(5)) throws {
            var last = ""
            try waitUntil(timeout: timeout, "playerctl \(arguments.joined(separator: " ")) to say '\(expected)' (last: '\(last)')") {
                last =
                    (try? graph.run(["playerctl", "-p", "soundscaped"] + arguments))?.stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                return last == expected
            }
        }

        func title(of id: String) throws -> String {
            let list = try JSONSerialization.jsonObject(with: Data(try daemon.must("list", "--json").stdout.utf8))
            let items = ((list as? [String: Any])?["soundscapes"] as? [[String: Any]]) ?? []
            return try #require(items.first { $0["id"] as? String == id }?["title"] as? String)
        }

        func signerPID() throws -> Int? {
            (try daemon.status()["signer"] as? [String: Any])?["pid"] as? Int
        }
    }

    @Test("playerctl sees title and signer, play-pause silences without stopping the signer, play, next, volume, and a call shows as Paused")
    func mediaControls() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("volume", "100")
            try setup.daemon.must("play", "alpha")
            try setup.startCompanion()

            try setup.waitForPlayerctl("status", toSay: "Playing")
            // The titles come from a ListSoundscapes the companion sends beside its Subscribe.
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: "alpha"))
            try setup.waitForPlayerctl("metadata", "artist", toSay: "igloo-signer running")
            let signer = try #require(try setup.signerPID())

            // The media key: silence, and the signer host goes on.
            _ = try setup.playerctl("play-pause")
            try setup.waitForPlayerctl("status", toSay: "Paused")
            #expect(try setup.daemon.status()["state"] as? String == "paused")
            try waitUntil(timeout: .seconds(5), "digital silence at the sink after play-pause") {
                try graph.record(sink: "speaker", seconds: 0.3).peak == 0
            }
            #expect(try setup.signerPID() == signer, "pause must keep the same signer host")
            #expect(kill(pid_t(signer), 0) == 0, "the signer host must still run while paused")
            #expect(try setup.playerctl("metadata", "artist") == "igloo-signer running")

            _ = try setup.playerctl("play")
            try setup.waitForPlayerctl("status", toSay: "Playing")
            try waitUntil(timeout: .seconds(5), "the tone to be audible again after play") {
                try graph.record(sink: "speaker", seconds: 0.5).rmsDB(from: 0.2) > -15
            }

            // Next: the title and the sound change (660 Hz after the crossfade).
            let beta = try setup.title(of: "beta")
            _ = try setup.playerctl("next")
            try setup.waitForPlayerctl("metadata", "title", toSay: beta)
            var frequency: Double?
            try waitUntil(timeout: .seconds(5), "660 Hz at the sink after next (last: \(String(describing: frequency)))") {
                frequency = try graph.record(sink: "speaker", seconds: 0.5).estimatedFrequency(from: 0.2)
                return frequency.map { abs($0 - 660) < 10 } ?? false
            }

            _ = try setup.playerctl("volume", "0.3")
            try waitUntil(timeout: .seconds(5), "the daemon's volume to be 30 %") {
                try setup.daemon.status()["volume"] as? Int == 30
            }
            try setup.waitForPlayerctl("volume", toSay: "0.300000")

            // A call: playerctl --follow sees Paused, then Playing when it ends.
            let follow = try graph.spawn(
                "playerctl", ["-p", "soundscaped", "--follow", "status"], name: "playerctl-follow",
                stdout: .capture)
            #expect(follow.nextLine(timeout: .seconds(5)) == "Playing")
            let callFile = graph.directory.appendingPathComponent("call.wav")
            try ChildProcess.run([
                "sox", "-n", "-b", "16", "-r", "48000", "-c", "1", callFile.path,
                "synth", "30", "sine", "300", "vol", "0.3",
            ]).requireSuccess()
            let call = try graph.play(callFile, mediaRole: "Communication", target: "phone")
            #expect(follow.nextLine(timeout: .seconds(10)) { $0 == "Paused" } == "Paused", "a call did not show as Paused")
            #expect(try setup.daemon.status()["state"] as? String == "interrupted")
            call.signal(SIGTERM)
            #expect(follow.nextLine(timeout: .seconds(10)) { $0 == "Playing" } == "Playing", "the call's end did not show as Playing")
            _ = follow.terminate()
        }
    }

    @Test("an import while the companion runs: Next reaches it, titled, and it plays; remove takes it off the list")
    func importSeenByMPRIS() throws {
        try ExternalTools.require(["sox"])
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("play", "wind")
            try setup.startCompanion()
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: "wind"))

            // Imported after the companion read the list: the user folder's manifest comes
            // first in that folder, so it follows wind, the last built-in.
            let recording = try ImportMaterial.make(
                "creek", container: .wav, rate: 44100, channels: 2, volume: 0.05, in: graph.directory)
            let imported = try graph.run(
                [try ProductLocator.soundscapectl().path, "import", recording.path, "--title", "Creek at dusk"], timeout: .seconds(40))
            try #require(imported.succeeded, "\(imported)")

            _ = try setup.playerctl("next")
            try setup.waitForPlayerctl("metadata", "title", toSay: "Creek at dusk")
            try setup.waitForPlayerctl("status", toSay: "Playing")
            #expect(try setup.daemon.status()["soundscape"] as? String == "creek")

            // Removed while it plays: the daemon switches away, and Next no longer finds it.
            try setup.daemon.must("remove", "creek")
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: "ocean-waves"))
            try setup.daemon.must("play", "wind")
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: "wind"))
            _ = try setup.playerctl("next")
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: "alpha"))
        }
    }

    @Test("Next goes from the last soundscape to a saved mix, titled by its name, and on to the first soundscape")
    func nextReachesASavedMix() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try setup.daemon.must("play", "alpha", "beta=50")
            try setup.daemon.must("save", "Evening mix")
            let list = try JSONSerialization.jsonObject(with: Data(try setup.daemon.must("list", "--json").stdout.utf8))
            let ids = (((list as? [String: Any])?["soundscapes"] as? [[String: Any]]) ?? [])
                .filter { $0["unplayable"] == nil || $0["unplayable"] is NSNull }.compactMap { $0["id"] as? String }
            let first = try #require(ids.first)
            let last = try #require(ids.last)
            try setup.daemon.must("play", last)
            try setup.startCompanion()
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: last))

            _ = try setup.playerctl("next")
            try setup.waitForPlayerctl("metadata", "title", toSay: "Evening mix")
            let status = try setup.daemon.status()
            #expect(status["mix"] as? String == "Evening mix")
            #expect(LayerTests.layers(status) == ["alpha": 100, "beta": 50])

            _ = try setup.playerctl("next")
            try setup.waitForPlayerctl("metadata", "title", toSay: try setup.title(of: first))
            _ = try setup.playerctl("previous")
            try setup.waitForPlayerctl("metadata", "title", toSay: "Evening mix")

            // A layer changed: no longer the saved mix, so the title names the layers.
            try setup.daemon.must("layer", "beta", "60")
            try setup.waitForPlayerctl(
                "metadata", "title", toSay: "\(try setup.title(of: "alpha")) + \(try setup.title(of: "beta"))")
        }
    }

    @Test("a signer that keeps crashing raises one notification naming it; with notifications off, none")
    func notifiesWhenTheSignerFails() throws {
        try PipeWireGraph.withGraph { graph in
            let log = graph.directory.appendingPathComponent("notifications.log")
            _ = try graph.spawn(
                Self.systemPython, ["-m", "dbusmock", "--session", "-t", "notification_daemon", "-l", log.path],
                name: "notification-mock")
            try waitUntil(timeout: .seconds(10), "the mock notification server on the session bus") {
                try graph.run(["busctl", "--user", "status", "org.freedesktop.Notifications"]).succeeded
            }
            let setup = try Setup(
                graph: graph, signer: "crashing-signer", body: "echo 'no relay' >&2; exit 3",
                arguments: ["--signer-restart-delay", "0.1", "--signer-crash-limit", "3"])
            try setup.startCompanion()
            func notifications() -> [String] {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                    .filter { $0.contains(" Notify ") }
            }

            // Off: the failure raises nothing.
            try setup.daemon.must("set", "notifications", "off")
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play", "alpha")
            _ = try events.next(reason: "signerFailed", timeout: .seconds(20))
            try setup.waitForPlayerctl("metadata", "artist", toSay: "crashing-signer failed (exited with status 3)")
            Thread.sleep(forTimeInterval: 1)  // what the companion would have sent by now
            #expect(notifications().isEmpty, "a notification while they are off: \(notifications())")

            // On: the next crash loop raises exactly one, naming the signer.
            try setup.daemon.must("stop")
            try setup.daemon.must("set", "notifications", "on")
            try setup.daemon.must("play", "alpha")
            _ = try events.next(reason: "signerFailed", timeout: .seconds(20))
            try waitUntil(timeout: .seconds(5), "a notification about the failed signer\n\(graph.logTail(lines: 20))") {
                !notifications().isEmpty
            }
            Thread.sleep(forTimeInterval: 2)  // a second one would come at once, if at all
            let sent = notifications()
            #expect(sent.count == 1, "\(sent)")
            #expect(sent.first?.contains("crashing-signer keeps crashing") == true, "\(sent)")
            #expect(sent.first?.contains("Keep-alive broken") == true, "\(sent)")
            events.stop()
        }
    }

    @Test("keep-awake holds one logind inhibitor from soundscaped while the session runs; stop releases it; no logind is shown in status")
    func keepAwakeHoldsAnInhibitor() throws {
        try PipeWireGraph.withGraph { graph in
            // A private system bus with python-dbusmock's logind on it.
            let systemBus = "unix:path=" + graph.directory.appendingPathComponent("system_bus").path
            _ = try graph.spawn(
                "dbus-daemon", ["--session", "--address=\(systemBus)", "--nofork", "--nopidfile"],
                name: "system-dbus")
            let system = ["DBUS_SYSTEM_BUS_ADDRESS": systemBus]
            let logind = try graph.spawn(
                Self.systemPython, ["-m", "dbusmock", "--system", "-t", "logind"],
                name: "logind-mock", extraEnvironment: system)
            func busctl(_ arguments: String...) throws -> ProcessResult {
                try ChildProcess.run(["busctl", "--system"] + arguments, environment: graph.environment(adding: system))
            }
            func inhibitors() throws -> String {
                try busctl(
                    "call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                    "ListInhibitors"
                ).requireSuccess().stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            try waitUntil(timeout: .seconds(10), "the mock logind on the private system bus") {
                (try? busctl("status", "org.freedesktop.login1"))?.succeeded == true
            }
            let setup = try Setup(graph: graph, environment: system)
            #expect(try inhibitors() == "a(ssssuu) 0")

            try setup.daemon.must("set", "keep-awake", "on")
            #expect(try inhibitors() == "a(ssssuu) 0", "nothing is held before a session runs")
            try setup.daemon.must("play", "alpha")
            let held = "a(ssssuu) 1 \"sleep:idle\" \"soundscaped\" \"Keeping the signer online\" \"block\" 1000 123456"
            var seen = ""
            try waitUntil(timeout: .seconds(5), "one inhibitor from soundscaped (seen: \(seen))") {
                seen = try inhibitors()
                return seen == held
            }
            #expect(((try setup.daemon.status()["keepAwake"] as? [String: Any])?["state"] as? String) == "held")
            // Pause keeps the session, so the inhibitor too.
            try setup.daemon.must("pause")
            #expect(try inhibitors() == held)

            try setup.daemon.must("stop")
            try waitUntil(timeout: .seconds(5), "stop to release the inhibitor") { try inhibitors() == "a(ssssuu) 0" }

            // The preference off releases it at once, too.
            try setup.daemon.must("play", "alpha")
            try waitUntil(timeout: .seconds(5), "the inhibitor again") { try inhibitors() == held }
            try setup.daemon.must("set", "keep-awake", "off")
            try waitUntil(timeout: .seconds(5), "keep-awake off to release it") { try inhibitors() == "a(ssssuu) 0" }
            #expect(try setup.daemon.status()["keepAwake"] is NSNull, "no keepAwake status while the preference is off")

            // No logind: said in status, and the sound goes on.
            _ = logind.terminate()
            try setup.daemon.must("set", "keep-awake", "on")
            var keepAwake: [String: Any] = [:]
            try waitUntil(timeout: .seconds(5), "status to say logind is absent (\(keepAwake))") {
                keepAwake = (try setup.daemon.status()["keepAwake"] as? [String: Any]) ?? [:]
                return keepAwake["state"] as? String == "unavailable"
            }
            #expect((keepAwake["detail"] as? String)?.contains("org.freedesktop.login1") == true, "\(keepAwake)")
            #expect(try setup.daemon.status()["isPlaying"] as? Bool == true)
            #expect(try setup.daemon.must("status").stdout.contains("Keep awake  on, but no inhibitor"))
        }
    }
}
