import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as systemd sees it: notifications on NOTIFY_SOCKET and a control
/// socket handed over with LISTEN_FDS, without systemd itself.
@Suite("systemd integration", .serialized, .timeLimit(.minutes(1)))
struct SystemdIntegrationTests {
    @Test("NOTIFY_SOCKET receives READY once, WATCHDOG at half of WATCHDOG_USEC, STATUS lines, and STOPPING on SIGTERM")
    func notifications() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let notify = try DatagramListener(path: graph.directory.appendingPathComponent("notify.sock").path)
            let socket = graph.directory.appendingPathComponent("ctl.sock").path
            let daemon = try graph.spawn(
                try ProductLocator.soundscaped().path,
                ["--socket", socket, "--state-dir", graph.directory.appendingPathComponent("state").path],
                name: "soundscaped",
                extraEnvironment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
            // Watchdog pings may come first (they only need the daemon's loop); READY comes once serving.
            let ready = try #require(notify.next(timeout: .seconds(10)) { $0.contains("READY=1") }, "no READY within 10 s")
            #expect(ready.hasPrefix("READY=1\nSTATUS="), "\(ready)")
            // Clients can connect as soon as READY is out.
            let status = try graph.run([try ProductLocator.soundscapectl().path, "status", "--socket", socket])
            #expect(status.succeeded, "\(status)")
            _ = try graph.run([try ProductLocator.soundscapectl().path, "play", "--socket", socket])

            let messages = notify.collect(for: .seconds(3))
            let pings = messages.filter { $0.text == "WATCHDOG=1" }
            #expect(!messages.contains { $0.text.contains("READY=1") }, "READY was sent twice")
            // 1 s watchdog → a ping every 0.5 s: about 6 in 3 s.
            #expect((5...7).contains(pings.count), "\(pings.count) pings in 3 s: \(messages.map(\.text))")
            let statuses = messages.compactMap { $0.text.hasPrefix("STATUS=") ? $0.text : nil }
            #expect(statuses.contains { $0.contains("Playing ocean-waves") }, "status lines: \(statuses)")

            daemon.signal(SIGTERM)
            let stopping = try #require(notify.next(timeout: .seconds(5)) { $0 == "STOPPING=1" }, "no STOPPING=1")
            #expect(stopping == "STOPPING=1")
            let exit = daemon.waitForExitStatus(timeout: .seconds(5))
            #expect(exit == .exited(0), "SIGTERM should end with status 0, got \(String(describing: exit))")
        }
    }

    @Test("a control socket passed in LISTEN_FDS is served, and the daemon's children do not see LISTEN_*")
    func socketActivation() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let socket = graph.directory.appendingPathComponent("activated.sock").path
            let records = graph.directory.appendingPathComponent("env-check")
            // systemd's part, done by python (SocketActivationLauncher).
            let daemon = try graph.spawn(
                "/usr/bin/env",
                SocketActivationLauncher.arguments(
                    socket: socket, executable: try ProductLocator.soundscaped().path,
                    [
                        "--state-dir", graph.directory.appendingPathComponent("state").path,
                        "--socket", graph.directory.appendingPathComponent("not-this-one.sock").path,
                        "--signer-command", "/bin/sh -c 'env > \(records.path); exec sleep 1000'",
                    ]), name: "soundscaped")
            try waitUntil(timeout: .seconds(10), "the daemon to answer on the passed socket") {
                (try? graph.run([try ProductLocator.soundscapectl().path, "status", "--socket", socket]))?.succeeded == true
            }
            #expect(
                !FileManager.default.fileExists(atPath: graph.directory.appendingPathComponent("not-this-one.sock").path),
                "with a passed socket the daemon must not bind its own")
            try graph.run([try ProductLocator.soundscapectl().path, "play", "--socket", socket]).requireSuccess()
            try waitUntil(timeout: .seconds(5), "the signer to record its environment") {
                ((try? String(contentsOf: records, encoding: .utf8)) ?? "").contains("SOUNDSCAPED_SOCKET")
            }
            let environment = try String(contentsOf: records, encoding: .utf8)
            #expect(!environment.contains("LISTEN_FDS") && !environment.contains("LISTEN_PID"), "\(environment)")
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        }
    }
}

extension DatagramListener {
    /// The next datagram matching `predicate`, skipping others.
    func next(timeout: Duration, where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = next(timeout: deadline - ContinuousClock.now), predicate(text) { return text }
        }
        return nil
    }
}
