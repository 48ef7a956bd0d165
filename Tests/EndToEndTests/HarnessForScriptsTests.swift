import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The harness as the scripts use it: `soundscape-bench graph` (scripts/lib.sh's
/// private graph and the soak's) and the systemd user manager (scripts/user-manager.sh).
@Suite("The harness for the scripts", .serialized, .timeLimit(.minutes(1)))
struct HarnessForScriptsTests {
    @Test("soundscape-bench graph: the environment, then ready; sink, default, restart and stop answered in order")
    func graphMode() throws {
        try ExternalTools.require(ExternalTools.graphTools)
        let bench = try ProductLocator.executable(named: "soundscape-bench")
        let process = try ChildProcess.start(
            bench.path, ["graph", "--sink", "speaker"], stdinPipe: true, stdout: .capture, stderr: .inherit,
            name: "soundscape-bench-graph")
        defer { process.killNow() }
        var environment: [String: String] = [:]
        while let line = process.nextLine(timeout: .seconds(20)), line != "ready" {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "not KEY=VALUE: \(line)")
            environment[parts[0]] = parts[1]
        }
        let directory = try #require(environment["XDG_RUNTIME_DIR"], "no XDG_RUNTIME_DIR in \(environment)")
        #expect(environment["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=\(directory)/bus")
        #expect(environment[ProcessSweeper.graphMarker] == directory)
        #expect(environment["HOME"] == nil, "the caller keeps its own HOME")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/logs/wireplumber.log"))

        func command(_ line: String) throws -> String {
            try process.write(line: line)
            return try #require(process.nextLine(timeout: .seconds(20)), "no answer to '\(line)'")
        }
        func sinks() throws -> [String] {
            let result = try ChildProcess.run(["pw-dump"], environment: ["PATH": ExternalTools.searchPath].merging(environment) { $1 })
            return try PipeWireGraph.Snapshot(pwDumpJSON: Data(result.requireSuccess().stdout.utf8)).sinks.compactMap(\.name).sorted()
        }
        #expect(try sinks() == ["speaker"])
        #expect(try command("sink headset") == "ok")
        #expect(try command("sink headset") == "ok", "a sink the graph has is not made twice")
        #expect(try sinks() == ["headset", "speaker"])
        #expect(try command("default headset") == "ok")
        #expect(try command("status pipewire") == "ok running")
        #expect(try command("kill pipewire KILL") == "ok")
        #expect(try command("status pipewire") == "ok exited 137")
        #expect(try command("restart") == "ok")
        #expect(try sinks() == ["headset", "speaker"], "restart makes the sinks again")
        let destroyed = try command("destroy headset")
        #expect(destroyed.hasPrefix("ok ") && Double(destroyed.dropFirst(3)) != nil, "\(destroyed)")
        #expect(try sinks() == ["speaker"])
        #expect(try command("devices") == "ok")
        #expect(try command("frobnicate").hasPrefix("error: unknown command 'frobnicate'"))
        #expect(try command("stop") == "ok")
        #expect(process.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        #expect(!FileManager.default.fileExists(atPath: directory), "stop removes the graph's directory")
        #expect(ProcessSweeper.processes(withEnvironment: ProcessSweeper.graphMarker, value: directory).isEmpty)
    }

    @Test("soundscape-bench graph stops everything at the end of its stdin")
    func graphModeEndsWithStdin() throws {
        let bench = try ProductLocator.executable(named: "soundscape-bench")
        let process = try ChildProcess.start(
            bench.path, ["graph"], stdinPipe: true, stdout: .capture, stderr: .inherit, name: "soundscape-bench-graph")
        defer { process.killNow() }
        let first = try #require(process.nextLine(timeout: .seconds(20)) { $0.hasPrefix("XDG_RUNTIME_DIR=") })
        let directory = String(first.dropFirst("XDG_RUNTIME_DIR=".count))
        #expect(process.nextLine(timeout: .seconds(20)) { $0 == "ready" } != nil)
        #expect(!ProcessSweeper.processes(withEnvironment: ProcessSweeper.graphMarker, value: directory).isEmpty)
        process.closeStdin()
        #expect(process.waitForExitStatus(timeout: .seconds(10)) == .exited(0))
        #expect(ProcessSweeper.processes(withEnvironment: ProcessSweeper.graphMarker, value: directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("soundscape-bench's command line: wav as the shell checks call it; a usage error exits 64 and names the mistake")
    func commandLine() throws {
        let bench = try ProductLocator.executable(named: "soundscape-bench").path
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bench-tone-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try ChildProcess.run([bench, "wav", "tone", file]).requireSuccess()
        // The tone peaks at 9000/32768 (-11.2 dBFS); a sine's RMS is 3.0 dB below its peak.
        #expect(try ChildProcess.run([bench, "wav", "level", file]).requireSuccess().stdout == "-14.2 -11.2\n")

        for (arguments, mistake) in [
            (["layers", "--seconds", "0"], "--seconds must be > 0"), (["--players", "vlc"], "unknown 'vlc'"),
            (["memory", "--frobnicate"], "--frobnicate"), (["sink-sound"], "<sink>"), (["wav", "play", file], "play"),
        ] {
            let wrong = try ChildProcess.run([bench] + arguments)
            #expect(wrong.exitStatus == .exited(64), "\(wrong)")
            #expect(wrong.stderr.contains(mistake), "\(wrong)")
        }
        let help = try ChildProcess.run([bench, "--help"]).requireSuccess()
        #expect(help.stdout.contains("--keepalive-seconds"), "the full benchmark's options: \(help)")
    }

    @Test(
        "A systemd user manager runs a service with the graph's environment, and stops with it",
        .enabled(if: getuid() == 0, "needs root (a mount namespace)"))
    func userManager() throws {
        // Where systemd booted, /run/systemd/system is the machine's own.
        let booted = FileManager.default.fileExists(atPath: "/run/systemd/system")
        try PipeWireGraph.withGraph { graph in
            let manager = try graph.startUserManager()
            defer { manager.stop() }
            #expect(
                FileManager.default.fileExists(atPath: "/run/systemd/system") == booted,
                "/run/systemd/system stays in the manager's namespace")
            let shown = try manager.systemctl("show-environment").requireSuccess().stdout
            #expect(shown.contains("XDG_RUNTIME_DIR=\(graph.directory.path)\n"), "\(shown)")
            try manager.run(["systemd-run", "--user", "--unit", "harness-probe", "sleep", "60"]).requireSuccess()
            let active = try manager.systemctl("is-active", "harness-probe.service")
            #expect(active.stdout == "active\n", "\(active)")
            let main = try manager.systemctl("show", "-p", "MainPID", "--value", "harness-probe.service").stdout
            let sleeper = try #require(Int32(main.trimmingCharacters(in: .whitespacesAndNewlines)), "MainPID: \(main)")
            #expect(ProcessSweeper.isAlive(sleeper))
            manager.stop()
            #expect(!ProcessSweeper.isAlive(manager.pid))
            try waitUntil(timeout: .seconds(5), "the manager's service to stop with it") { !ProcessSweeper.isAlive(sleeper) }
        }
    }

    @Test(
        "A regular user's systemd user manager runs as that user, in a cgroup delegated to it, with a runtime directory of its own",
        .enabled(if: getuid() == 0, "needs root (a mount namespace, setpriv, cgroups)"))
    func accountManager() throws {
        let account = try SystemdUserManager.Account(name: "nobody")
        // Reachable by the user: a directory of its own in /tmp, 0755.
        let directory = URL(fileURLWithPath: "/tmp/soundscape-account-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o755)
        let home = directory.appendingPathComponent("home").path
        let runtime = directory.appendingPathComponent("runtime").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        #expect(chown(home, account.uid, account.gid) == 0)
        try PipeWireGraph.withGraph { graph in
            let manager = try graph.startUserManager(
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": runtime,
                    ProcessSweeper.graphMarker: graph.directory.path,
                ],
                account: account)
            defer { manager.stop() }
            let status = try String(contentsOfFile: "/proc/\(manager.pid)/status", encoding: .utf8)
            #expect(status.contains("\nUid:\t\(account.uid)\t"), "the manager is not \(account.name)'s")
            let cgroup = try String(contentsOfFile: "/proc/\(manager.pid)/cgroup", encoding: .utf8)
            #expect(cgroup.contains("soundscape-harness-user-\(account.uid)"), "\(cgroup)")
            #expect(try manager.run(["id", "-u"]).requireSuccess().stdout == "\(account.uid)\n", "run() is not the user")
            let runtimeMode = try manager.run(["stat", "-c", "%u %a %T", "-f", runtime]).requireSuccess().stdout
            #expect(runtimeMode.hasSuffix("tmpfs\n"), "XDG_RUNTIME_DIR is not a tmpfs in the manager's namespace: \(runtimeMode)")
            let owner = try manager.run(["stat", "-c", "%u %a", runtime]).requireSuccess().stdout
            #expect(owner == "\(account.uid) 700\n", "XDG_RUNTIME_DIR: \(owner)")
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: runtime)) == [],
                "the runtime directory's tmpfs stays in the manager's namespace")
            let service = try manager.run(["systemd-run", "--user", "--wait", "--pipe", "-q", "id", "-u"])
            #expect(service.stdout == "\(account.uid)\n", "a service of the manager: \(service)")
            manager.stop()
            #expect(!ProcessSweeper.isAlive(manager.pid))
            let cgroups = cgroup.split(separator: "\n").compactMap { $0.split(separator: ":", maxSplits: 2).last }
                .filter { $0.contains("soundscape-harness-user-") }
            #expect(!cgroups.isEmpty)
            for path in cgroups {
                let roots = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"]
                #expect(
                    !roots.contains { FileManager.default.fileExists(atPath: $0 + path) },
                    "the manager's cgroup \(path) outlived it")
            }
        }
    }
}
