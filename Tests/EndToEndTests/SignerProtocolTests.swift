import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Real signers run as they are, and their health is known: the sd_notify protocol
/// spoken with python3-sdnotify and `systemd-notify`, the stop signal, a passphrase
/// file on stdin, restarting forever, and a health command — each against a real
/// daemon and the fixture signer (Fixtures/fixture-signer.py).
@Suite("Signer protocols", .serialized, .timeLimit(.minutes(1)))
struct SignerProtocolTests {
    typealias Setup = SignerTests.Setup

    static func signer(_ event: [String: Any]) -> [String: Any] {
        (event["signer"] as? [String: Any]) ?? [:]
    }

    static func environment(of pid: Int, in setup: Setup) throws -> [String: String] {
        try waitUntil(timeout: .seconds(5), "fixture \(pid) to write its environment") { setup.file("\(pid).env") != nil }
        let text = try #require(setup.file("\(pid).env"))
        return Dictionary(
            text.split(separator: "\n").compactMap { line in
                line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            }, uniquingKeysWith: { $1 })
    }

    /// Sends `text` to a datagram socket from this process (another process group than the signer's).
    static func send(_ text: String, to path: String) throws {
        try UnixSocket.send(Array(text.utf8), to: UnixSocketAddress(path: path))
    }

    @Test(
        "sd_notify (python3-sdnotify): starting until READY=1, STATUS= in status, strangers dropped, systemd-notify works, missing WATCHDOG=1 is a hang"
    )
    func sdNotify() throws {
        try PipeWireGraph.withGraph { graph in
            var stale = ""
            let setup = try Setup(
                graph: graph, signerArguments: ["--watchdog"],
                daemonArguments: [
                    "--signer-type", "notify", "--signer-liveness-timeout", "1", "--signer-start-grace", "30",
                    "--signer-restart-delay", "0.2", "--signer-stop-timeout", "1",
                ],
                stdin: "null",
                prepare: { daemon in
                    // What a daemon killed with SIGKILL would have left beside its socket.
                    stale = daemon.socket + ".signer-7.notify"
                    try FileManager.default.createDirectory(
                        atPath: FileSystemPath.parent(of: daemon.socket),
                        withIntermediateDirectories: true)
                    try Data().write(to: URL(fileURLWithPath: stale))
                })
            #expect(!FileManager.default.fileExists(atPath: stale), "a stale notify socket is removed at start")
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let started = try events.next(reason: "signerStarted")
            let pid = try #require(SignerTests.pid(of: started))
            #expect(Self.signer(started)["state"] as? String == "starting")
            #expect(Self.signer(started)["ready"] as? Bool == false)

            let environment = try Self.environment(of: pid, in: setup)
            let notifySocket = try #require(environment["NOTIFY_SOCKET"])
            #expect(notifySocket.hasPrefix(FileSystemPath.parent(of: setup.daemon.socket) + "/"), "\(notifySocket)")
            #expect(environment["WATCHDOG_USEC"] == "1000000")

            try setup.command("notify READY=1\\nSTATUS=3/3 relays")
            let ready = try events.next(reason: "signerReady")
            #expect(Self.signer(ready)["state"] as? String == "running")
            #expect(Self.signer(ready)["ready"] as? Bool == true)
            let status = try events.next(reason: "signerStatus")
            #expect(status["message"] as? String == "3/3 relays")
            #expect(Self.signer(status)["status"] as? String == "3/3 relays")
            let human = try setup.daemon.must("status").stdout
            #expect(human.contains("Signer      running, pid \(pid), 0 restarts"), "\(human)")
            #expect(human.contains("Signer says 3/3 relays"), "\(human)")

            // A stranger (this test, another process group) is dropped; the signer's next line is not.
            try Self.send("STATUS=a stranger's line\nSTOPPING=1", to: notifySocket)
            try setup.command("notify STATUS=2/3 relays")
            let own = try events.next(reason: "signerStatus")
            #expect(own["message"] as? String == "2/3 relays")
            #expect(
                !events.seen.contains {
                    ($0["message"] as? String)?.contains("stranger") == true
                        || $0["reason"] as? String == "signerStopping"
                })
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(log.contains("outside the signer's process group, was dropped"))

            // systemd-notify, run by the signer, as a shell-script signer would.
            try setup.command("run systemd-notify --status='via systemd-notify'")
            let viaTool = try events.next(reason: "signerStatus")
            #expect(viaTool["message"] as? String == "via systemd-notify")

            // The watchdog pings stop: hung, stopped, restarted; its socket goes with it.
            try setup.command("hang")
            let hung = try events.next(reason: "signerHung", timeout: .seconds(5))
            #expect((hung["message"] as? String)?.hasPrefix("no heartbeat for") == true)
            _ = try events.next(reason: "signerExited")
            #expect(!FileManager.default.fileExists(atPath: notifySocket), "the instance's notify socket is removed")
            let next = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            #expect(next != pid)
            #expect(try Self.environment(of: next, in: setup)["NOTIFY_SOCKET"] != notifySocket, "each instance gets its own")
            events.stop()
        }
    }

    @Test("a STATUS= line sent with systemd-notify by a shell-script signer reaches playerctl metadata")
    func statusReachesTheDesktop() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try DesktopTests.Setup(graph: graph, body: "systemd-notify --status='3/3 relays'; exec sleep infinity")
            try setup.daemon.must("play", "alpha")
            try setup.startCompanion()
            try setup.waitForPlayerctl("metadata", "artist", toSay: "igloo-signer: 3/3 relays")
        }
    }

    @Test("floods, oversized datagrams and passed descriptors on the notify socket cost nothing lasting")
    func notifySocketAbuse() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, stdin: "null")
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            let notifySocket = try #require(try Self.environment(of: pid, in: setup)["NOTIFY_SOCKET"])
            let daemon = try #require(setup.daemon.process?.pid)
            let descriptorsBefore = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon)/fd").count

            // A stranger: a datagram far over 4096 bytes, and 20 datagrams carrying 10 descriptors each.
            let stranger = """
                import array, os, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                s.connect(sys.argv[1])
                s.send(b"STATUS=" + b"x" * 60000)
                fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(10)]
                for _ in range(20):
                    s.sendmsg([b"BARRIER=1"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
                """
            try graph.run(["/usr/bin/python3", "-c", stranger, notifySocket]).requireSuccess()
            // The signer itself: oversized, then a flood of status lines.
            let started = ContinuousClock.now
            try setup.command("notify STATUS=\(String(repeating: "y", count: 5000))")
            try setup.command("flood 20000")
            let done = try events.next(timeout: .seconds(30), "the flood's last line") { $0["message"] as? String == "flood done" }
            let took = ContinuousClock.now - started
            #expect(Self.signer(done)["status"] as? String == "flood done")
            let announced = events.seen.filter { $0["reason"] as? String == "signerStatus" }.count
            let seconds = took / .seconds(1)
            #expect(Double(announced) <= seconds + 2, "\(announced) signerStatus events in \(took)")
            #expect(
                !events.seen.contains { ($0["message"] as? String)?.contains("xxxx") == true || ($0["message"] as? String)?.contains("yyyy") == true }
            )

            let descriptorsAfter = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon)/fd").count
            #expect(descriptorsAfter <= descriptorsBefore + 2, "descriptors: \(descriptorsBefore) before, \(descriptorsAfter) after")
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(log.contains("a datagram of 60007 bytes (over 4096) was dropped"))
            #expect(log.contains("a datagram of 5007 bytes (over 4096) was dropped"))
            #expect(try setup.daemon.ctl("status", timeout: .seconds(5)).succeeded)
            events.stop()
        }
    }

    @Test("signer-stop-signal = SIGINT is the signal the signer gets; a reload naming an unknown signal is refused and SIGINT stays")
    func stopSignal() throws {
        try PipeWireGraph.withGraph { graph in
            let config = graph.directory.appendingPathComponent("signer.conf")
            try "signer-stop-signal = SIGINT   # bifrost-rs hosts stop cleanly on it\n".write(to: config, atomically: true, encoding: .utf8)
            let setup = try Setup(graph: graph, signerArguments: ["--record-signals"], daemonArguments: ["--config", config.path])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            _ = try Self.environment(of: pid, in: setup)

            try "signer-stop-signal = SIGINT\nsigner-health-retries = 2\nsigner-stop-signal = SIGKIL\n"
                .write(to: config, atomically: true, encoding: .utf8)
            let twice = try setup.daemon.ctl("reload")
            #expect(twice.status == 1 && twice.stderr.contains("line 3: 'signer-stop-signal' is set twice"), "\(twice.stderr)")
            try "signer-health-retries = 2\nsigner-stop-signal = SIGKIL\n".write(to: config, atomically: true, encoding: .utf8)
            let refused = try setup.daemon.ctl("reload")
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.contains("line 2: signer-stop-signal: unknown signal 'SIGKIL'"), "\(refused.stderr)")

            try setup.daemon.must("stop")
            let stopped = try events.next(reason: "signerStopped")
            #expect(stopped["message"] as? String == "exited with status 0", "a clean exit, not SIGKILL")
            #expect(setup.file("\(pid).signal") == "SIGINT")
            events.stop()
        }
    }

    @Test("signer-stdin = file: gives the passphrase then end of file; a group-readable file is refused, at start and at spawn")
    func stdinFile() throws {
        try PipeWireGraph.withGraph { graph in
            let passphrase = graph.directory.appendingPathComponent("passphrase")
            try "correct horse battery staple\n".write(to: passphrase, atomically: true, encoding: .utf8)
            chmod(passphrase.path, 0o600)
            let setup = try Setup(graph: graph, signerArguments: ["--read-all"], stdin: "file:\(passphrase.path)")
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            // The fixture writes the file only once its read reached the end of the file.
            try waitUntil(timeout: .seconds(5), "the signer to read its stdin to the end") { setup.file("\(pid).stdin") != nil }
            #expect(setup.file("\(pid).stdin") == "correct horse battery staple\n")

            // Checked again at each start: made group-readable meanwhile, the next start is refused.
            chmod(passphrase.path, 0o640)
            try setup.command("crash 1")
            let refused = try events.next(timeout: .seconds(10), "a start refused") {
                ($0["message"] as? String)?.hasPrefix("could not start") == true
            }
            #expect(
                refused["message"] as? String
                    == "could not start: signer-stdin file:\(passphrase.path): its group or others have access (mode 0640); chmod 600 it")
            events.stop()

            // And at startup, on the command line and in the file.
            let flag = try graph.run([
                try ProductLocator.soundscaped().path, "--socket", graph.directory.appendingPathComponent("b.sock").path,
                "--signer-command", "true", "--signer-stdin", "file:\(passphrase.path)",
            ])
            #expect(flag.status == 1)
            #expect(
                flag.stderr.contains("--signer-stdin file:\(passphrase.path): its group or others have access (mode 0640); chmod 600 it"),
                "\(flag.stderr)")
            let config = graph.directory.appendingPathComponent("stdin.conf")
            try "signer-command = true\n\nsigner-stdin = file:\(passphrase.path)\n".write(to: config, atomically: true, encoding: .utf8)
            let file = try graph.run([
                try ProductLocator.soundscaped().path, "--socket", graph.directory.appendingPathComponent("c.sock").path,
                "--config", config.path,
            ])
            #expect(file.status == 1)
            #expect(
                file.stderr.contains("stdin.conf: line 3: signer-stdin file:\(passphrase.path): its group or others have access"),
                "\(file.stderr)")
            let missing = try graph.run([
                try ProductLocator.soundscaped().path, "--socket", graph.directory.appendingPathComponent("d.sock").path,
                "--signer-command", "true", "--signer-stdin", "file:/nonexistent/passphrase",
            ])
            #expect(missing.status == 1)
            #expect(
                missing.stderr.contains("--signer-stdin file:/nonexistent/passphrase: cannot open it: No such file or directory"),
                "\(missing.stderr)")
        }
    }

    @Test("signer-crash-limit = 0 still restarts after 10 quick failures")
    func restartsForever() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(
                graph: graph, signerArguments: ["--crash-at-start", "3"],
                daemonArguments: [
                    "--signer-crash-limit", "0", "--signer-restart-delay", "0.01",
                    "--signer-restart-max-delay", "0.05",
                ])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let eleventh = try events.next(timeout: .seconds(20), "the 11th start") {
                $0["reason"] as? String == "signerStarted" && (Self.signer($0)["restarts"] as? Int ?? 0) >= 10
            }
            #expect(Self.signer(eleventh)["state"] as? String == "running")
            #expect(!events.seen.contains { $0["reason"] as? String == "signerFailed" })
            events.stop()
        }
    }

    @Test(
        "the health command: passing sets the status line; failing retries times is unhealthy, down and a restart; passing again is healthy and restored"
    )
    func healthCommand() throws {
        try PipeWireGraph.withGraph { graph in
            // Run in the signer's directory with its environment: `ok` is relative, FIXTURE_EXTRA from --signer-env.
            let probe = "if test -f hang; then echo $$ > probe.pid; exec sleep 100; fi; test -f ok && echo \"relays: 3/3 ($FIXTURE_EXTRA)\""
            let setup = try Setup(
                graph: graph,
                daemonArguments: [
                    "--signer-health-command", "/bin/sh -c '\(probe)'", "--signer-health-interval", "0.2",
                    "--signer-health-timeout", "1", "--signer-health-retries", "2", "--signer-restart-delay", "0.1",
                    "--signer-stop-timeout", "1",
                ])
            #expect(FileManager.default.createFile(atPath: setup.records.appendingPathComponent("ok").path, contents: nil))
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let first = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            let passing = try events.next(reason: "signerStatus")
            #expect(passing["message"] as? String == "relays: 3/3 (from config)")
            #expect(Self.signer(passing)["health"] as? String == "healthy")

            // Signing stops: the probe hangs, and is killed at its timeout, twice.
            try FileManager.default.removeItem(at: setup.records.appendingPathComponent("ok"))
            #expect(FileManager.default.createFile(atPath: setup.records.appendingPathComponent("hang").path, contents: nil))
            let unhealthy = try events.next(reason: "signerUnhealthy", timeout: .seconds(10))
            #expect(unhealthy["message"] as? String == "2 failed health checks in a row: no answer within 1 s (killed)")
            #expect(Self.signer(unhealthy)["health"] as? String == "unhealthy")
            let down = try events.next(reason: "signerDown")
            #expect(down["message"] as? String == "unhealthy")
            let signerAlive = try StateStoreFaultTests.health(setup.daemon)["signerAlive"] ?? [:]
            #expect(signerAlive["ok"] as? Bool == false, "GetHealth fails while signing is down")
            #expect((signerAlive["detail"] as? String)?.hasPrefix("signing is down (unhealthy): signer host ") == true, "\(signerAlive)")
            let probePID = try #require(setup.file("probe.pid").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            #expect(!SignerTests.isAlive(probePID), "a probe past its timeout is killed")

            // Stopped and restarted; the restart alone does not end the verdict.
            _ = try events.next(reason: "signerExited")
            let second = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            #expect(second != first && !SignerTests.isAlive(first))
            #expect(try setup.daemon.status()["signer"].flatMap { ($0 as? [String: Any])?["health"] as? String } == "unhealthy")

            try FileManager.default.removeItem(at: setup.records.appendingPathComponent("hang"))
            #expect(FileManager.default.createFile(atPath: setup.records.appendingPathComponent("ok").path, contents: nil))
            let healthy = try events.next(reason: "signerHealthy", timeout: .seconds(10))
            #expect(Self.signer(healthy)["health"] as? String == "healthy")
            _ = try events.next(reason: "signerRestored")
            #expect(try StateStoreFaultTests.health(setup.daemon)["signerAlive"]?["ok"] as? Bool == true)
            #expect(!events.seen.contains { $0["reason"] as? String == "signerDown" && $0["seq"] as? Int != down["seq"] as? Int })
            events.stop()
        }
    }

    @Test("a health probe still running when its signer stops is killed with it, not left to its timeout")
    func probeIsOwned() throws {
        try PipeWireGraph.withGraph { graph in
            let probe = "echo $$ > probe.pid; exec sleep 100"
            let setup = try Setup(
                graph: graph,
                daemonArguments: [
                    "--signer-health-command", "/bin/sh -c '\(probe)'", "--signer-health-interval", "0.2",
                    "--signer-health-timeout", "60", "--signer-stop-timeout", "1",
                ])
            try setup.daemon.must("play")
            try waitUntil(timeout: .seconds(5), "the first probe to start") { setup.file("probe.pid") != nil }
            let probePID = try #require(setup.file("probe.pid").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            #expect(SignerTests.isAlive(probePID))
            try setup.daemon.must("stop")
            try waitUntil(timeout: .seconds(3), "the probe of the stopped signer to be killed (its timeout is 60 s)") {
                !SignerTests.isAlive(probePID)
            }
        }
    }
}

/// Path arithmetic for the tests (no Foundation URL juggling for a parent directory).
enum FileSystemPath {
    static func parent(of path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }
}
