import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP and `soundscapectl reload` read the config file again and never end
/// the daemon; a bad file is refused with its line and changes nothing; no
/// signal a user might send ends the keep-alive but SIGTERM and SIGINT.
@Suite("Reload and signals", .serialized, .timeLimit(.minutes(1)))
struct ReloadTests {
    struct Setup {
        let graph: PipeWireGraph
        let daemon: Soundscaped
        let config: URL

        init(
            graph: PipeWireGraph, config text: String, arguments: [String] = [], loops: [String: Int] = ["tone": 440],
            launcher: [String] = []
        ) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            config = graph.directory.appendingPathComponent("soundscaped.conf")
            try text.write(to: config, atomically: true, encoding: .utf8)
            daemon = try Soundscaped(graph: graph, arguments: ["--config", config.path] + arguments)
            for (id, frequency) in loops {
                _ = try ToneLoops.make(id: id, frequency: frequency, in: daemon.userSoundscapes)
            }
            try daemon.start(launcher: launcher)
            try daemon.must("volume", "100")
            try daemon.must("play", "tone")
        }

        /// Runs soundscaped without the harness's `--log-level debug`, which would win over the file's.
        static let withoutLogLevelFlag = [
            "/bin/sh", "-c",
            #"exe=$1; shift; skip=; for a; do shift; if [ -n "$skip" ]; then skip=; continue; fi; if [ "$a" = --log-level ]; then skip=1; continue; fi; set -- "$@" "$a"; done; exec "$exe" "$@""#,
            "sh",
        ]

        func write(_ text: String) throws {
            try text.write(to: config, atomically: true, encoding: .utf8)
        }

        func level() throws -> Float {
            try graph.record(sink: "speaker", seconds: 0.6).rmsDB(from: 0.2, to: 0.6)
        }

        func signerPID() throws -> Int? {
            (try daemon.status()["signer"] as? [String: Any])?["pid"] as? Int
        }
    }

    static let signer = "signer-command = /bin/sh -c 'exec sleep infinity'   # runs, nothing else\n"

    @Test("a valid file is taken and its changes named; the signer host keeps running; the sound goes on")
    func validReload() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, config: Self.signer + "signer-env = STAGE=one\n")
            let process = try #require(setup.daemon.process)
            try waitUntil(timeout: .seconds(5), "the signer host to start") { try setup.signerPID() != nil }
            let signer = try #require(try setup.signerPID())

            try setup.write(Self.signer + "signer-env = STAGE=two\nsigner-stop-timeout = 2\ninterruption-roles = Phone\n")
            let reload = try setup.daemon.must("reload")
            #expect(reload.stdout.contains("signer-env → STAGE (the signer's next start)"), "\(reload.stdout)")
            #expect(reload.stdout.contains("signer-stop-timeout"), "\(reload.stdout)")
            #expect(reload.stdout.contains("interruption-roles → Phone (now)"), "\(reload.stdout)")
            #expect(try setup.signerPID() == signer, "a reload must not restart a running signer host")
            #expect(process.isRunning)
            #expect(try setup.level() > -15, "the tone stopped across the reload")

            // SIGHUP does the same, and says so in the log.
            try setup.write(Self.signer + "signer-env = STAGE=three\nlog-level = debug\n")
            process.signal(SIGHUP)
            try waitUntil(timeout: .seconds(5), "the SIGHUP reload to be logged") {
                graph.logTail(lines: 100).contains("(SIGHUP): ")
            }
            #expect(process.isRunning, "SIGHUP ended the daemon")
            #expect(try setup.daemon.status()["state"] as? String == "playing")
            #expect(try setup.signerPID() == signer)
        }
    }

    @Test("an invalid file is refused with its line named, and the old settings stay")
    func invalidReload() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, config: "interruption-roles = Phone\n")
            let process = try #require(setup.daemon.process)
            try setup.write("interruption-roles = Phone\n\nno-such-key = 1\n")
            let refused = try setup.daemon.ctl("reload")
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.contains("line 3") && refused.stderr.contains("unknown key 'no-such-key'"), "\(refused.stderr)")
            process.signal(SIGHUP)
            try waitUntil(timeout: .seconds(5), "the refused SIGHUP reload to be logged") {
                graph.logTail(lines: 100).contains("reload (SIGHUP) refused, the old settings stay")
            }
            #expect(process.isRunning)
            // The old settings stay: reloading the original file again changes nothing.
            try setup.write("interruption-roles = Phone\n")
            #expect(try setup.daemon.must("reload").stdout.contains("nothing changed"))
        }
    }

    @Test("a signer host added by a reload starts with the running session, and one removed stops")
    func signerAddedAndRemoved() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, config: "")
            #expect(try setup.daemon.status()["signer"] is NSNull)
            try setup.write(Self.signer)
            try setup.daemon.must("reload")
            try waitUntil(timeout: .seconds(5), "the new signer host to start") { try setup.signerPID() != nil }
            let pid = try #require(try setup.signerPID())
            try setup.write("")
            try setup.daemon.must("reload")
            #expect(try setup.daemon.status()["signer"] is NSNull)
            #expect(kill(pid_t(pid), 0) != 0, "the removed signer host still runs")
            #expect(try setup.level() > -15)
        }
    }

    /// The `.now` settings the `Reloader` hands to the PipeWire output and the log
    /// handler (ReloadEffectTests proves the others below the daemon): each reload
    /// changes what the running daemon does, not only what `reload` says.
    @Test("a reload applies the call rules, the cache budget and the log level at once")
    func callRulesCacheAndLogLevel() throws {
        try PipeWireGraph.withGraph { graph in
            func file(_ logLevel: String, roles: String, apps: String, cacheSize: Int) -> String {
                "log-level = \(logLevel)\ninterruption-roles = \(roles)\nvoip-apps = \(apps)\ncache-size = \(cacheSize)\n"
            }
            let cache = graph.directory.appendingPathComponent("pcm").path
            // cache-size = 0: "tone" plays by decoding, nothing is cached.
            let setup = try Setup(
                graph: graph, config: file("warning", roles: "Phone", apps: "nobody", cacheSize: 0),
                arguments: ["--cache-dir", cache], loops: ["tone": 440, "tone2": 550], launcher: Setup.withoutLogLevelFlag)
            try graph.createNullSink(name: "phone")
            try graph.setDefaultSink(name: "speaker")
            let events = try setup.daemon.followEvents()
            defer { events.stop() }

            // log-level: warning hides notices (the start's own among them); the reload to info shows its own.
            try setup.write(file("info", roles: "Phone", apps: "nobody", cacheSize: 512))
            try setup.daemon.must("reload")
            try waitUntil(timeout: .seconds(5), "the reload's notice, under the reloaded log-level info") {
                graph.logTail(lines: 100).contains("reloaded \(setup.config.path)")
            }
            // cache-size: the next loop played is cached under the new budget.
            try setup.daemon.must("play", "tone2")
            try waitUntil(timeout: .seconds(10), "tone2 to be cached under the reloaded cache-size") {
                ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).contains { $0.hasSuffix(".f32") }
            }

            let wav = graph.directory.appendingPathComponent("call.wav")
            try ChildProcess.run([
                "sox", "-n", "-b", "16", "-r", "48000", "-c", "1", wav.path, "synth", "60", "sine", "300", "vol", "0.3",
            ]).requireSuccess()
            // interruption-roles: a Communication stream is no call until the reload names the role.
            let call = try graph.play(wav, mediaRole: "Communication", target: "phone")
            try waitUntil(timeout: .seconds(5), "the call's stream in the graph") {
                !((try? graph.snapshot().nodes(ofProcess: call.pid)) ?? []).isEmpty
            }
            #expect(try setup.daemon.status()["state"] as? String == "playing")
            try setup.write(file("info", roles: "Communication", apps: "nobody", cacheSize: 512))
            try setup.daemon.must("reload")
            _ = try events.next(reason: "interrupted")
            call.signal(SIGTERM)
            _ = try events.next(reason: "resumed")

            // voip-apps: a Music stream of pw-play is no call until the reload names the application.
            let app = try graph.play(wav, mediaRole: "Music", target: "phone")
            try waitUntil(timeout: .seconds(5), "the application's stream in the graph") {
                !((try? graph.snapshot().nodes(ofProcess: app.pid)) ?? []).isEmpty
            }
            #expect(try setup.daemon.status()["state"] as? String == "playing")
            try setup.write(file("info", roles: "Communication", apps: "pw-play, pw-cat", cacheSize: 512))
            try setup.daemon.must("reload")
            _ = try events.next(reason: "interrupted")
            app.signal(SIGTERM)
            _ = try events.next(reason: "resumed")
        }
    }

    @Test("SIGUSR1, SIGUSR2 and SIGPIPE are ignored; the keep-alive goes on")
    func otherSignalsAreIgnored() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, config: "")
            let process = try #require(setup.daemon.process)
            for signal in [SIGUSR1, SIGUSR2, SIGPIPE] {
                process.signal(signal)
            }
            // The daemon answers after them (so they were delivered and handled), still playing.
            #expect(try setup.daemon.status()["state"] as? String == "playing")
            #expect(process.isRunning)
            #expect(try setup.level() > -15)
        }
    }

    @Test("under systemd, a reload is RELOADING=1 with MONOTONIC_USEC, then READY=1")
    func notifiesSystemd() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let notify = try DatagramListener(path: graph.directory.appendingPathComponent("notify.sock").path)
            let socket = graph.directory.appendingPathComponent("ctl.sock").path
            _ = try graph.spawn(
                try ProductLocator.soundscaped().path,
                ["--socket", socket, "--state-dir", graph.directory.appendingPathComponent("state").path],
                name: "soundscaped", extraEnvironment: ["NOTIFY_SOCKET": notify.path])
            _ = try #require(notify.next(timeout: .seconds(10)) { $0.contains("READY=1") }, "no READY")
            let reload = try graph.run([try ProductLocator.soundscapectl().path, "reload", "--socket", socket])
            #expect(reload.succeeded, "\(reload)")
            let reloading = try #require(notify.next(timeout: .seconds(5)) { $0.contains("RELOADING=1") }, "no RELOADING=1")
            let fields = reloading.split(separator: "\n")
            let usec = fields.first { $0.hasPrefix("MONOTONIC_USEC=") }.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            #expect(usec.map { $0 <= nowUsec && nowUsec - $0 < 10_000_000 } == true, "MONOTONIC_USEC: \(reloading)")
            _ = try #require(notify.next(timeout: .seconds(5)) { $0.hasPrefix("READY=1") }, "no READY=1 after the reload")
        }
    }
}
