import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The signer host: started with the session, fed every event, restarted
/// with backoff, given up on after a crash loop, and never outliving the
/// daemon — with a real child process (tests/Fixtures/fixture-signer.py).
@Suite("Signer host", .serialized, .timeLimit(.minutes(1)))
struct SignerTests {
    /// A daemon with the fixture signer, plus the fixture's record directory.
    struct Setup {
        let graph: PipeWireGraph
        let daemon: Soundscaped
        let records: URL

        init(
            graph: PipeWireGraph, signerArguments: [String] = [], daemonArguments: [String] = [],
            stdin: String = "events", prepare: (Soundscaped) throws -> Void = { _ in }
        ) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            records = graph.directory.appendingPathComponent("signer-records")
            try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
            guard mkfifo(records.appendingPathComponent("control").path, 0o600) == 0 else {
                throw HarnessError("mkfifo failed: \(errno)")
            }
            let script = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/fixture-signer.py").path
            // Debian's python3, which has python3-sdnotify (a python on PATH may be another one).
            let command = (["/usr/bin/python3", script] + signerArguments).map { "'\($0)'" }.joined(separator: " ")
            daemon = try Soundscaped(
                graph: graph,
                arguments: [
                    "--signer-command", command, "--signer-stdin", stdin,
                    "--signer-env", "FIXTURE_DIR=\(records.path)",
                    "--signer-env", "FIXTURE_EXTRA=from config",
                    "--signer-directory", records.path,
                ] + daemonArguments)
            try prepare(daemon)
            try daemon.start()
        }

        /// Sends a command to whichever fixture instance is running.
        func command(_ line: String) throws {
            let fd = open(records.appendingPathComponent("control").path, O_WRONLY)
            guard fd >= 0 else { throw HarnessError("cannot open the fixture's control FIFO: \(errno)") }
            defer { close(fd) }
            _ = (line + "\n").withCString { write(fd, $0, strlen($0)) }
        }

        /// The lines fixture instance `pid` received on stdin.
        func received(by pid: Int) -> [[String: Any]] {
            let text = (try? String(contentsOf: records.appendingPathComponent("\(pid).events"), encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        func file(_ name: String) -> String? {
            try? String(contentsOf: records.appendingPathComponent(name), encoding: .utf8)
        }
    }

    static func pid(of event: [String: Any]) -> Int? {
        (event["signer"] as? [String: Any])?["pid"] as? Int
    }

    static func isAlive(_ pid: Int) -> Bool {
        // A zombie has exited; only a process that still runs counts.
        guard let stat = ProcStat(path: "/proc/\(pid)/stat") else { return false }
        return stat.field(3) != "Z"
    }

    static func groupMembers(_ group: Int) -> [Int] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int.init).filter { pid in
            guard isAlive(pid), let pgrp = ProcStat(path: "/proc/\(pid)/stat")?.field(5) else { return false }
            return Int(pgrp) == group
        }
    }

    @Test("play starts the signer with the socket in its environment; it gets a snapshot, then every event; stop ends its group")
    func lifecycleAndEvents() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, signerArguments: ["--child"])
            let events = try setup.daemon.followEvents()
            #expect((try setup.daemon.status()["signer"] as? [String: Any])?["state"] as? String == "stopped")

            try setup.daemon.must("play")
            let started = try events.next(reason: "signerStarted")
            #expect(started["type"] as? String == "signer")
            let pid = try #require(Self.pid(of: started))
            try waitUntil(timeout: .seconds(5), "the fixture to write its environment") { setup.file("\(pid).env") != nil }
            let environment = try #require(setup.file("\(pid).env"))
            #expect(environment.contains("SOUNDSCAPED_SOCKET=\(setup.daemon.socket)"))
            #expect(environment.contains("CWD=\(setup.records.path)"))
            #expect(environment.contains("FIXTURE_EXTRA=from config"))
            let group = try #require(environment.split(separator: "\n").first { $0.hasPrefix("PGID=") }.flatMap { Int($0.dropFirst(5)) })
            #expect(group != getpgrp(), "the signer must run in its own process group")

            try setup.daemon.must("volume", "40")
            try setup.daemon.must("volume", "60")
            let last = try events.next(reason: "volumeChanged")
            let lastSeq = try #require(last["seq"] as? Int)
            try waitUntil(timeout: .seconds(5), "the signer to receive event \(lastSeq)") {
                setup.received(by: pid).contains { $0["seq"] as? Int == lastSeq }
            }
            let received = setup.received(by: pid)
            #expect(received.first?["reason"] as? String == "snapshot", "the first line is the current state")
            let seqs = received.compactMap { $0["seq"] as? Int }
            #expect(seqs == Array(seqs[0]...(seqs[0] + seqs.count - 1)), "gaps or disorder in \(seqs)")

            let status = try #require(try setup.daemon.status()["signer"] as? [String: Any])
            #expect(status["state"] as? String == "running")
            #expect(status["pid"] as? Int == pid)
            let human = try setup.daemon.must("status").stdout
            #expect(human.contains("Signer      running, pid \(pid), 0 restarts"), "\(human)")

            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(log.contains("signer[\(pid)]: fixture signer \(pid) started"))
            #expect(log.contains("signer[\(pid)] stderr: fixture signer \(pid) says hello on stderr"))

            let grandchild = try #require(setup.file("\(pid).child").flatMap { Int($0) })
            #expect(Self.isAlive(grandchild))
            try setup.daemon.must("stop")
            let stopped = try events.next(reason: "signerStopped")
            #expect((stopped["signer"] as? [String: Any])?["state"] as? String == "stopped")
            #expect(!Self.isAlive(pid) && !Self.isAlive(grandchild))
            #expect(Self.groupMembers(group).isEmpty, "left in the group: \(Self.groupMembers(group))")
            events.stop()
        }
    }

    @Test("a signer that ignores SIGTERM is killed after the stop timeout, with its whole group")
    func stopEscalatesToKill() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(
                graph: graph, signerArguments: ["--ignore-term", "--child"],
                daemonArguments: ["--signer-stop-timeout", "0.5"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            try waitUntil(timeout: .seconds(5), "the grandchild") { setup.file("\(pid).child") != nil }
            let grandchild = try #require(setup.file("\(pid).child").flatMap { Int($0) })

            let before = ContinuousClock.now
            try setup.daemon.must("stop")
            let stopped = try events.next(reason: "signerStopped", timeout: .seconds(5))
            let took = ContinuousClock.now - before
            #expect((stopped["message"] as? String)?.contains("signal 9") == true, "\(stopped)")
            #expect(took >= .milliseconds(450), "SIGKILL came before the stop timeout: \(took)")
            #expect(!Self.isAlive(pid) && !Self.isAlive(grandchild))
            events.stop()
        }
    }

    @Test("a crashing signer is restarted with backoff; a crash loop marks it failed until the next play")
    func restartsAndCrashLoop() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, daemonArguments: ["--signer-restart-delay", "0.2", "--signer-crash-limit", "3"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let first = try #require(Self.pid(of: try events.next(reason: "signerStarted")))

            try setup.command("crash 3")
            let exited = try events.next(reason: "signerExited")
            #expect(exited["message"] as? String == "exited with status 3")
            let restarting = try events.next(reason: "signerRestarting")
            #expect(restarting["message"] as? String == "restarting in 0.2 s")
            let again = try events.next(reason: "signerStarted")
            let second = try #require(Self.pid(of: again))
            #expect(second != first)
            #expect((again["signer"] as? [String: Any])?["restarts"] as? Int == 1)
            #expect(!Self.isAlive(first))

            // Quick failures in a row: 0.2 s, then 0.4 s, then give up.
            try setup.command("crash 4")
            #expect(try events.next(reason: "signerRestarting")["message"] as? String == "restarting in 0.4 s")
            _ = try events.next(reason: "signerStarted")
            try setup.command("crash 5")
            let failed = try events.next(reason: "signerFailed")
            #expect((failed["signer"] as? [String: Any])?["state"] as? String == "failed")
            #expect((try setup.daemon.status()["signer"] as? [String: Any])?["state"] as? String == "failed")
            // The sound tells the truth: a failed signer is down, and the cue replaces the soundscape.
            let down = try events.next(reason: "signerDown")
            #expect(down["message"] as? String == "failed")
            let held = try setup.daemon.status()
            #expect(held["state"] as? String == "interrupted")
            #expect(held["interruptions"] as? [String] == ["signerDown"])
            #expect(held["wantsPlaying"] as? Bool == true)
            let signerAlive = try StateStoreFaultTests.health(setup.daemon)["signerAlive"] ?? [:]
            #expect(signerAlive["ok"] as? Bool == false)
            #expect(
                (signerAlive["detail"] as? String)?.hasPrefix("signing is down (failed): signer host failed (last exited with status 5)") == true,
                "\(signerAlive)")

            // What the sink carries is said: the cue, not "no audio flowing".
            try waitUntil(timeout: .seconds(5), "status to say the cue plays") {
                try setup.daemon.status()["cuePlaying"] as? Bool == true
            }
            let cue = try setup.daemon.must("status").stdout
            #expect(cue.contains("interrupted (signer down: the cue plays)"), "\(cue)")
            #expect(!cue.contains("no audio flowing"), "\(cue)")

            try setup.daemon.must("play")
            let fresh = try events.next(reason: "signerStarted")
            #expect((fresh["signer"] as? [String: Any])?["restarts"] as? Int == 0)
            // The failure belonged to the instances before: history in JSON, not the headline.
            let running = try setup.daemon.must("status").stdout
            #expect(running.contains("Signer      running, pid \(Self.pid(of: fresh) ?? 0), 0 restarts"), "\(running)")
            #expect(!running.contains("exited with status 5"), "\(running)")
            #expect((try setup.daemon.status()["signer"] as? [String: Any])?["lastExit"] as? String == "exited with status 5")
            events.stop()
        }
    }

    @Test("the signer and its group die with the daemon, even when the daemon is SIGKILLed")
    func diesWithTheDaemon() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, signerArguments: ["--child", "--ignore-term"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            try waitUntil(timeout: .seconds(5), "the grandchild") { setup.file("\(pid).child") != nil }
            let grandchild = try #require(setup.file("\(pid).child").flatMap { Int($0) })
            events.stop()

            #expect(try setup.daemon.stop(signal: SIGKILL) == .signaled(SIGKILL))
            try waitUntil(timeout: .seconds(5), "the signer (\(pid)) and its grandchild (\(grandchild)) to die") {
                !Self.isAlive(pid) && !Self.isAlive(grandchild)
            }
        }
    }

    @Test("keep-running leaves the signer up while the audio is stopped")
    func keepRunning() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, daemonArguments: ["--signer-keep-running"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            try setup.daemon.must("stop")
            _ = try events.next(reason: "stopped")
            let signer = try #require(try setup.daemon.status()["signer"] as? [String: Any])
            #expect(signer["state"] as? String == "running")
            #expect(Self.isAlive(pid))
            #expect(try setup.daemon.stop() == .exited(0))
            #expect(!Self.isAlive(pid), "the signer must stop with the daemon")
        }
    }

    @Test("a signer that stops sending heartbeats is treated as hung and restarted")
    func livenessDetectsAHang() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(
                graph: graph, signerArguments: ["--heartbeat", "0.1"],
                daemonArguments: [
                    "--signer-liveness-timeout", "0.8", "--signer-restart-delay", "0.2",
                    "--signer-stop-timeout", "0.5",
                ])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            // Heartbeats keep it alive well past the liveness timeout.
            Thread.sleep(forTimeInterval: 1.5)
            #expect((try setup.daemon.status()["signer"] as? [String: Any])?["pid"] as? Int == pid)
            #expect(!events.seen.contains { $0["reason"] as? String == "signerHung" })

            try setup.command("hang")
            let hung = try events.next(reason: "signerHung", timeout: .seconds(5))
            #expect((hung["message"] as? String)?.hasPrefix("no heartbeat for") == true)
            _ = try events.next(reason: "signerRestarting")
            let next = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            #expect(next != pid && !Self.isAlive(pid))
            events.stop()
        }
    }

    @Test("a signer that never reads its stdin does not block the daemon")
    func nonReadingSignerCannotBlock() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, signerArguments: ["--no-read"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            _ = try events.next(reason: "signerStarted")
            events.stop()
            // Enough events to fill the pipe (64 KiB) and the signer's queue (1024) several times over.
            let client = try FramedSocket(path: setup.daemon.socket, timeout: .seconds(5))
            for index in 0..<3000 {
                let reply = try client.call(
                    json: #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":\#(index % 2 == 0 ? 20 : 30)}}"#)
                #expect(reply.errorName == nil)
            }
            let result = try setup.daemon.ctl("status", timeout: .seconds(5))
            #expect(result.succeeded, "the daemon stopped answering: \(result)")
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(log.contains("is not reading its events"))
        }
    }

    @Test("with no sink, the keep-alive session and its signer run, and status and health say there is no sink")
    func noSink() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph)
            try graph.destroyNode(name: "speaker")
            let events = try setup.daemon.followEvents()
            let play = try setup.daemon.ctl("play")
            #expect(play.succeeded && play.stderr.contains("will play as soon as audio output is available"), "\(play)")
            let pid = try #require(Self.pid(of: try events.next(reason: "signerStarted")))
            try waitUntil(timeout: .seconds(5), "status to say there is no sink") {
                try setup.daemon.status()["noSink"] as? Bool == true
            }
            let status = try setup.daemon.status()
            #expect(status["route"] is NSNull)
            #expect(status["state"] as? String == "recovering")
            #expect(status["isPlaying"] as? Bool == false)
            #expect(status["wantsPlaying"] as? Bool == true)
            #expect((status["signer"] as? [String: Any])?["state"] as? String == "running")
            #expect(Self.isAlive(pid))
            let human = try setup.daemon.must("status").stdout
            #expect(human.contains("Route       — (no sink to play to; waiting for one)"), "\(human)")
            let health = try StateStoreFaultTests.health(setup.daemon)
            #expect(health["audioFlowing"]?["detail"] as? String == "wanted playing but recovering: no sink to play to")
            #expect(health["signerAlive"]?["ok"] as? Bool == true, "the signer runs without a sink")

            // A sound device appears: it plays there, with the same signer.
            try graph.createNullSink(name: "speaker")
            try waitUntil(timeout: .seconds(10), "the daemon to play once a sink appears") {
                try setup.daemon.status()["isPlaying"] as? Bool == true
            }
            #expect(try setup.daemon.status()["noSink"] as? Bool == false)
            #expect((try setup.daemon.status()["signer"] as? [String: Any])?["pid"] as? Int == pid)
            events.stop()
        }
    }

    @Test("a bad config file names the line and the daemon refuses to start")
    func badConfigRefusesToStart() throws {
        try PipeWireGraph.withGraph { graph in
            let config = graph.directory.appendingPathComponent("soundscaped.conf")
            try "# keep-alive\nsigner-command = my-signer --flag\nsigner-keep-runing = yes\n".write(to: config, atomically: true, encoding: .utf8)
            let result = try graph.run([
                try ProductLocator.soundscaped().path, "--config", config.path,
                "--socket", graph.directory.appendingPathComponent("c.sock").path,
            ])
            #expect(result.status == 1)
            #expect(result.stderr.contains("soundscaped.conf: line 3: unknown key 'signer-keep-runing'"), "\(result.stderr)")

            try "signer-command = 'unterminated\n".write(to: config, atomically: true, encoding: .utf8)
            let quoting = try graph.run([
                try ProductLocator.soundscaped().path, "--config", config.path,
                "--socket", graph.directory.appendingPathComponent("c.sock").path,
            ])
            #expect(quoting.status == 1)
            #expect(quoting.stderr.contains("line 1: signer-command: unterminated single quote"), "\(quoting.stderr)")
        }
    }
}
