import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The built-in HTTP check (signer-health-url, signer-health-json) against a real
/// HTTP server, the igloo-server stand-in (Fixtures/signers/igloo-server.py, Python's
/// http.server) as the signer: each answer it can give, each failure named as the
/// status line says it, a refused connection, and a hanging request closed when its
/// instance ends. And the monitoring-plugins exit codes: WARNING is degraded, shown
/// by soundscapectl and playerctl, and never down.
@Suite("The signer's HTTP check and degraded health", .serialized, .timeLimit(.minutes(1)))
struct SignerHTTPCheckTests {
    static let server = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/signers/igloo-server.py").path

    /// The stand-in as the signer, answering as `mode` says; the check every 0.2 s, failing at once.
    struct Setup {
        let desktop: DesktopTests.Setup
        let mode: URL
        var daemon: Soundscaped { desktop.daemon }

        init(graph: PipeWireGraph, port: Int, url: String? = nil, timeout: Int = 1) throws {
            mode = graph.directory.appendingPathComponent("igloo-mode")
            desktop = try DesktopTests.Setup(
                graph: graph, signer: "igloo-server",
                body: "exec /usr/bin/python3 '\(SignerHTTPCheckTests.server)' --port \(port) --mode-file '\(mode.path)'",
                arguments: [
                    "--signer-health-url", url ?? "http://127.0.0.1:\(port)/api/status",
                    "--signer-health-json", "/health/isConnected == true",
                    "--signer-health-interval", "0.2", "--signer-health-timeout", "\(timeout)", "--signer-health-retries", "1",
                    "--signer-restart-on-unhealthy", "false",
                ])
        }

        func answer(_ words: String) throws {
            try words.write(to: mode, atomically: true, encoding: .utf8)
        }
    }

    static func signer(_ event: [String: Any]) -> [String: Any] { SignerProtocolTests.signer(event) }

    @Test("true passes; false, 500, garbage and a hang each fail, named; true again is healthy")
    func eachAnswer() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, port: try LocalPort.free())
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play", "alpha")
            let passing = try events.next(reason: "signerStatus")
            #expect(passing["message"] as? String == "/health/isConnected is true")
            #expect(Self.signer(passing)["health"] as? String == "healthy")

            let failures = [
                ("false", "/health/isConnected is false, not true"), ("500", "HTTP 500"),
                ("garbage", "HTTP 200, but the body is not JSON"), ("hang", "no answer within 1 s"),
            ]
            for (answer, words) in failures {
                try setup.answer(answer)
                let unhealthy = try events.next(reason: "signerUnhealthy", timeout: .seconds(10))
                #expect(unhealthy["message"] as? String == "1 failed health check in a row: \(words)", "answer \(answer)")
                #expect(Self.signer(unhealthy)["health"] as? String == "unhealthy")
                if answer == "false" {
                    #expect(try events.next(reason: "signerDown")["message"] as? String == "unhealthy")
                    let alive = try StateStoreFaultTests.health(setup.daemon)["signerAlive"] ?? [:]
                    #expect(alive["ok"] as? Bool == false, "GetHealth fails while signing is down")
                }
                try setup.answer("true")
                _ = try events.next(reason: "signerHealthy", timeout: .seconds(10))
            }
            #expect(try events.next(reason: "signerRestored", timeout: .seconds(5))["reason"] != nil)
            #expect(FileManager.default.fileExists(atPath: setup.mode.path + ".hung"), "the hanging request was closed at the timeout")
            events.stop()
        }
    }

    @Test("a port nobody listens on is a refused connection")
    func refused() throws {
        try PipeWireGraph.withGraph { graph in
            let closed = try LocalPort.free()
            let setup = try Setup(graph: graph, port: try LocalPort.free(), url: "http://127.0.0.1:\(closed)/api/status")
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play", "alpha")
            let unhealthy = try events.next(reason: "signerUnhealthy", timeout: .seconds(10))
            #expect(unhealthy["message"] as? String == "1 failed health check in a row: connection refused")
            events.stop()
        }
    }

    @Test("a request still hanging when its signer stops is closed with it, not left to its timeout")
    func cancelledWithItsInstance() throws {
        try PipeWireGraph.withGraph { graph in
            // The server outlives the signer here (a process of the test's), so it can tell
            // when the daemon closes the connection.
            let port = try LocalPort.free()
            let mode = graph.directory.appendingPathComponent("status-mode")
            try "hang".write(to: mode, atomically: true, encoding: .utf8)
            let server = try graph.spawn(
                "/usr/bin/python3", [Self.server, "--port", "\(port)", "--mode-file", mode.path], name: "status-server", stdout: .capture)
            defer { _ = server.terminate() }
            #expect(server.nextLine(timeout: .seconds(10))?.hasPrefix("igloo-server stand-in") == true)
            let setup = try DesktopTests.Setup(
                graph: graph,
                arguments: [
                    "--signer-health-url", "http://127.0.0.1:\(port)/api/status", "--signer-health-interval", "0.2",
                    "--signer-health-timeout", "60",
                ])
            let hung = URL(fileURLWithPath: mode.path + ".hung")
            try setup.daemon.must("play", "alpha")
            Thread.sleep(forTimeInterval: 1)  // past the first check's start, 0.2 s after the spawn
            #expect(!FileManager.default.fileExists(atPath: hung.path), "the check still waits (its timeout is 60 s)")
            try setup.daemon.must("stop")
            try waitUntil(timeout: .seconds(3), "the stopped signer's check to close its connection") {
                FileManager.default.fileExists(atPath: hung.path)
            }
        }
    }

    @Test("a health command and a URL together are refused, naming the line")
    func bothAreRefused() throws {
        try PipeWireGraph.withGraph { graph in
            let config = graph.directory.appendingPathComponent("soundscaped.conf")
            try "signer-command = /bin/sleep infinity\nsigner-health-command = /bin/true\nsigner-health-url = http://127.0.0.1:8002/api/status\n"
                .write(to: config, atomically: true, encoding: .utf8)
            let result = try graph.run([
                try ProductLocator.soundscaped().path, "--config", config.path,
                "--socket", graph.directory.appendingPathComponent("c.sock").path,
            ])
            #expect(result.status == 1)
            #expect(
                result.stderr.contains(
                    "soundscaped.conf: line 3: signer-health-url: signer-health-url and signer-health-command are both set"),
                "\(result.stderr)")
        }
    }

    @Test("monitoring-plugins: WARNING is degraded, in status, GetHealth and playerctl, and never down")
    func degraded() throws {
        try PipeWireGraph.withGraph { graph in
            let state = graph.directory.appendingPathComponent("plugin-exit")
            try "1".write(to: state, atomically: true, encoding: .utf8)
            let plugin = "read code < \(state.path); [ $code = 1 ] && echo \"PEERS WARNING - 2/3 online\"; exit $code"
            let setup = try DesktopTests.Setup(
                graph: graph,
                arguments: [
                    "--signer-health-command", "/bin/sh -c '\(plugin)'", "--signer-health-exit-codes", "monitoring-plugins",
                    "--signer-health-interval", "0.2", "--signer-health-retries", "1", "--signer-start-grace", "1",
                ])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play", "alpha")
            let degraded = try events.next(reason: "signerDegraded", timeout: .seconds(10))
            #expect(degraded["message"] as? String == "PEERS WARNING - 2/3 online")
            #expect(Self.signer(degraded)["health"] as? String == "degraded")
            let human = try setup.daemon.must("status").stdout
            #expect(human.contains("DEGRADED (it signs, but its health check warns)"), "\(human)")
            let alive = try StateStoreFaultTests.health(setup.daemon)["signerAlive"] ?? [:]
            #expect(alive["ok"] as? Bool == true, "degraded is not down: \(alive)")
            try setup.startCompanion()
            try setup.waitForPlayerctl("metadata", "artist", toSay: "igloo-signer degraded: PEERS WARNING - 2/3 online")
            // Past the start grace and several checks: still playing the soundscape, never down.
            Thread.sleep(forTimeInterval: 1.5)
            #expect(try setup.daemon.status()["soundscape"] as? String == "alpha")
            // CRITICAL fails; OK again is healthy.
            try "2".write(to: state, atomically: true, encoding: .utf8)
            let critical = try events.next(reason: "signerUnhealthy", timeout: .seconds(10))
            #expect((critical["message"] as? String)?.hasSuffix("exited with status 2 (CRITICAL)") == true, "\(critical)")
            try "0".write(to: state, atomically: true, encoding: .utf8)
            _ = try events.next(reason: "signerHealthy", timeout: .seconds(10))
            #expect(!events.seen.contains { $0["reason"] as? String == "signerDown" && $0["seq"] as? Int ?? 0 < critical["seq"] as? Int ?? 0 })
            events.stop()
        }
    }
}
