import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A broken config under socket activation: the daemon stays up, tells systemd it is
/// ready (so it is not restarted every 2 s), answers every call with the problem at once
/// (the file, the line), and starts itself again, in the same process and on the same
/// socket, once the file is mended. (scripts/check-package's broken-config stage does the
/// same under the packaged units and a real user manager.)
@Suite("Not configured", .serialized, .timeLimit(.minutes(1)))
struct NotConfiguredTests {
    /// The daemon socket-activated (`SocketActivationLauncher`), and a NOTIFY_SOCKET to hear READY on.
    struct Setup {
        let graph: PipeWireGraph
        let socket: String
        let config: URL
        let daemon: ChildProcess
        let notify: DatagramListener

        init(graph: PipeWireGraph, config text: String, arguments: [String] = [], stderr: URL? = nil) throws {
            self.graph = graph
            try graph.createNullSink(name: "speaker")
            socket = graph.directory.appendingPathComponent("activated.sock").path
            config = graph.directory.appendingPathComponent("soundscaped.conf")
            try text.write(to: config, atomically: true, encoding: .utf8)
            notify = try DatagramListener(path: graph.directory.appendingPathComponent("notify.sock").path)
            daemon = try graph.spawn(
                "/usr/bin/env",
                SocketActivationLauncher.arguments(
                    socket: socket, executable: try ProductLocator.soundscaped().path,
                    ["--state-dir", graph.directory.appendingPathComponent("state").path, "--config", config.path] + arguments),
                name: "soundscaped", extraEnvironment: ["NOTIFY_SOCKET": notify.path],
                stderr: stderr.map { .file($0) })
        }

        func ctl(_ arguments: String...) throws -> ProcessResult {
            try graph.run([try ProductLocator.soundscapectl().path] + arguments + ["--socket", socket], timeout: .seconds(20))
        }

        /// The next READY=1 (the daemon serves its socket from then on).
        @discardableResult
        func ready(_ what: String = "READY") throws -> String {
            try #require(notify.next(timeout: .seconds(10)) { $0.contains("READY=1") }, "no \(what) within 10 s")
        }

        func write(_ text: String) throws {
            try text.write(to: config, atomically: true, encoding: .utf8)
        }

        /// A passphrase file in the graph's directory that others may read (mode 0644), which
        /// `signer-stdin = file:` refuses until it is made private.
        static func readableByOthers(passphraseIn graph: PipeWireGraph) throws -> URL {
            let passphrase = graph.directory.appendingPathComponent("passphrase")
            try "secret\n".write(to: passphrase, atomically: true, encoding: .utf8)
            chmod(passphrase.path, 0o644)
            return passphrase
        }
    }

    @Test("a typo: every command answers at once, exit 1, naming the line; READY is sent; mending the file starts it")
    func typo() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, config: "# mine\nsigner-comand = /bin/true\n")
            let ready = try setup.ready()
            #expect(ready.contains("STATUS=Not configured: "), "\(ready)")
            #expect(ready.contains("line 2: unknown key 'signer-comand' (did you mean 'signer-command'?)"), "\(ready)")
            let pid = setup.daemon.pid
            for command in [["play"], ["status"], ["volume", "30"], ["list"], ["events"]] {
                let started = ContinuousClock.now
                let result = try setup.graph.run(
                    [try ProductLocator.soundscapectl().path] + command + ["--socket", setup.socket], timeout: .seconds(20))
                #expect(ContinuousClock.now - started < .seconds(10), "\(command) took \(ContinuousClock.now - started)")
                #expect(result.status == 1, "\(command): \(result)")
                #expect(result.stderr.contains("soundscaped is not configured: "), "\(command): \(result.stderr)")
                #expect(result.stderr.contains("soundscaped.conf: line 2: unknown key 'signer-comand'"), "\(command): \(result.stderr)")
            }
            // Still the same process, never restarted.
            #expect(kill(pid, 0) == 0)

            // Mended: the daemon notices (inotify), starts again in the same process, and plays.
            try setup.write("# mine\nsigner-command = /bin/sh -c 'exec sleep 1000'\n")
            let reloading = try #require(setup.notify.next(timeout: .seconds(10)) { $0.contains("RELOADING=1") }, "no RELOADING")
            #expect(!reloading.contains("STOPPING=1"))
            let again = try setup.ready("READY after the mend")
            #expect(!again.contains("Not configured"), "\(again)")
            let play = try setup.ctl("play")
            #expect(play.succeeded, "\(play)")
            #expect(setup.daemon.pid == pid)
            let status = try setup.ctl("status")
            #expect(status.stdout.contains("Signer"), "\(status.stdout)")
            setup.daemon.signal(SIGTERM)
            #expect(setup.daemon.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        }
    }

    @Test("a value out of range and an unreadable passphrase file are answered; a call after the mend is served")
    func valueAndPassphrase() throws {
        try PipeWireGraph.withGraph { graph in
            let passphrase = try Setup.readableByOthers(passphraseIn: graph)
            let setup = try Setup(graph: graph, config: "signer-health-retries = 0\n")
            try setup.ready()
            let range = try setup.ctl("status")
            #expect(range.status == 1)
            #expect(range.stderr.contains("line 1: signer-health-retries expects a whole number from 1 to 100, got '0'"), "\(range.stderr)")

            // The file, mended, now names a passphrase file others may read: refused, named, without a restart.
            try setup.write("signer-command = /bin/sh -c 'exec sleep 1000'\nsigner-stdin = file:\(passphrase.path)\n")
            let reload = try setup.ctl("reload")
            #expect(reload.status == 1)
            #expect(
                reload.stderr.contains("line 2: signer-stdin file:\(passphrase.path): its group or others have access (mode 0644)"),
                "\(reload.stderr)")

            // The passphrase file made private changes no config file: the next call finds it
            // mended, the daemon starts again, and the call, asked again, is served.
            chmod(passphrase.path, 0o600)
            let play = try setup.ctl("play")
            #expect(play.succeeded, "\(play)")
            #expect(play.stdout.hasPrefix("Playing"), "\(play.stdout)")
            setup.daemon.signal(SIGTERM)
            #expect(setup.daemon.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        }
    }

    /// The call that finds the mend makes the daemon start again while that call, and any
    /// others in progress, still owe their `Restarting`: the server must write those before
    /// it closes their connections, and accept no connection it will not serve.
    @Test("calls that find the mend together are all served: none loses its connection")
    func callsTogetherAtTheMend() throws {
        try PipeWireGraph.withGraph { graph in
            let passphrase = try Setup.readableByOthers(passphraseIn: graph)
            let setup = try Setup(
                graph: graph, config: "signer-command = /bin/sh -c 'exec sleep 1000'\nsigner-stdin = file:\(passphrase.path)\n")
            try setup.ready()
            let pid = setup.daemon.pid
            // Mended without a change to the config file: the calls themselves find it.
            chmod(passphrase.path, 0o600)
            let calls = 8
            let together = try graph.run(
                [
                    "/bin/sh", "-c",
                    """
                    pids=
                    for i in $(seq \(calls)); do "$0" status --socket "$1" > "$2/out.$i" 2>&1 & pids="$pids $!"; done
                    failed=0
                    for pid in $pids; do wait "$pid" || failed=$((failed + 1)); done
                    echo "$failed failed"
                    cat "$2"/out.*
                    """,
                    try ProductLocator.soundscapectl().path, setup.socket, graph.directory.path,
                ], timeout: .seconds(30))
            #expect(together.stdout.hasPrefix("0 failed"), "\(together.stdout)")
            #expect(together.stdout.components(separatedBy: "Signer").count - 1 == calls, "\(together.stdout)")
            #expect(setup.daemon.pid == pid)
            setup.daemon.signal(SIGTERM)
            #expect(setup.daemon.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        }
    }

    @Test(
        "a flag its unit gives it, refused or unknown, is answered like a file's line: at once, exit 1, no restart",
        arguments: [
            (["--signer-stop-signal", "KILL"], "--signer-stop-signal: unknown signal 'KILL'"),
            (["--bogus"], "the command line: unknown option '--bogus'"),
        ])
    func flagErrors(flags: [String], message: String) throws {
        try PipeWireGraph.withGraph { graph in
            let log = graph.directory.appendingPathComponent("daemon.log")
            let setup = try Setup(graph: graph, config: "# fine\n", arguments: flags, stderr: log)
            let ready = try setup.ready()
            #expect(ready.contains("STATUS=Not configured: \(message)"), "\(ready)")
            let pid = setup.daemon.pid
            // Each call looks at the configuration again: the same flags give the same answer,
            // never "resolves now" and a start that fails again.
            for _ in 0..<3 {
                let status = try setup.ctl("status")
                #expect(status.status == 1, "\(status)")
                #expect(status.stderr.contains("soundscaped is not configured: \(message)"), "\(status.stderr)")
                #expect(!status.stderr.contains("starting again"), "\(status.stderr)")
            }
            #expect(kill(pid, 0) == 0)
            #expect(setup.daemon.pid == pid)
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(!said.contains("resolves now"), "\(said)")
            #expect(said.contains("not configured: \(message)"), "\(said)")
            setup.daemon.signal(SIGTERM)
            #expect(setup.daemon.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        }
    }

    @Test("the desktop companion raises one notification with the daemon's message, however often it asks")
    func companionNotifies() throws {
        try PipeWireGraph.withGraph { graph in
            let notifications = graph.directory.appendingPathComponent("notifications.log")
            _ = try graph.spawn(
                DesktopTests.systemPython, ["-m", "dbusmock", "--session", "-t", "notification_daemon", "-l", notifications.path],
                name: "notification-mock")
            try waitUntil(timeout: .seconds(10), "the mock notification server on the session bus") {
                try graph.run(["busctl", "--user", "status", "org.freedesktop.Notifications"]).succeeded
            }
            let setup = try Setup(graph: graph, config: "cache-size = -1\n")
            try setup.ready()
            let companionLog = graph.directory.appendingPathComponent("companion.log")
            _ = try graph.spawn(
                try ProductLocator.soundscapedDesktop().path, ["--socket", setup.socket, "--log-level", "debug"],
                name: "soundscaped-desktop", stderr: .file(companionLog))
            func heard() -> Int {
                ((try? String(contentsOf: companionLog, encoding: .utf8)) ?? "").components(separatedBy: "the daemon is not configured").count - 1
            }
            func sent() -> [String] {
                ((try? String(contentsOf: notifications, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                    .filter { $0.contains(" Notify ") }
            }
            // It asks again at every reconnect; by its third answer, a second notification would be out.
            try waitUntil(timeout: .seconds(15), "the companion to hear 'not configured' three times") { heard() >= 3 }
            #expect(sent().count == 1, "\(sent())")
            #expect(sent().first?.contains("line 1: cache-size expects a whole number from 0 to 1048576, got '-1'") == true, "\(sent())")
            // The media controls say the same, not "soundscaped is not running" (it runs).
            var artist = ""
            try waitUntil(timeout: .seconds(10), "playerctl to show the not-configured line") {
                artist = try graph.run(["playerctl", "-p", "soundscaped", "metadata", "xesam:artist"]).stdout
                return artist.contains("soundscaped is not configured: ")
            }
            #expect(artist.contains("line 1: cache-size expects a whole number"), "\(artist)")
        }
    }

    @Test("run by hand, a broken config is still the end: status 1 and the message")
    func byHand() throws {
        try PipeWireGraph.withGraph { graph in
            let config = graph.directory.appendingPathComponent("broken.conf")
            try "cache-size = lots\n".write(to: config, atomically: true, encoding: .utf8)
            let result = try graph.run([
                try ProductLocator.soundscaped().path, "--socket", graph.directory.appendingPathComponent("x.sock").path,
                "--state-dir", graph.directory.appendingPathComponent("state").path, "--config", config.path,
            ])
            #expect(result.status == 1)
            #expect(result.stderr.contains("broken.conf: line 1: cache-size expects a whole number"), "\(result.stderr)")
        }
    }
}
