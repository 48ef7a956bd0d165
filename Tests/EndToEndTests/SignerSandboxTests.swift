import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The signer's sandbox is its own: the daemon denies itself writable-and-executable
/// memory on every thread but its spawner's, and none of it reaches the signer; a signer
/// may ask for W^X and fewer address families for itself; a death at start is named.
@Suite("Signer sandbox", .serialized, .timeLimit(.minutes(1)))
struct SignerSandboxTests {
    typealias Setup = SignerTests.Setup

    /// Each thread of `pid`: its name and how many seccomp filters it runs under.
    static func threads(of pid: Int32) throws -> [(name: String, filters: Int)] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").compactMap { task in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { return nil }
            var name = ""
            var filters = 0
            for line in status.split(separator: "\n") {
                if line.hasPrefix("Name:") { name = line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("Seccomp_filters:") { filters = Int(line.dropFirst(16).trimmingCharacters(in: .whitespaces)) ?? 0 }
            }
            return (name, filters)
        }
    }

    /// What the fixture signer `pid` found it may do (`--probe-sandbox`).
    static func sandbox(of pid: Int, in setup: Setup) throws -> String {
        try waitUntil(timeout: .seconds(5), "fixture \(pid) to write what its sandbox allows") { setup.file("\(pid).sandbox") != nil }
        return try #require(setup.file("\(pid).sandbox"))
    }

    @Test("the daemon denies itself W^X on every thread but the spawner's, and the signer gets none of it")
    func daemonHardeningStopsAtTheSigner() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, signerArguments: ["--probe-sandbox"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            #expect(try Self.sandbox(of: pid, in: setup) == "wx=ok inet=ok unix=ok")
            let daemon = try #require(setup.daemon.process).pid
            let threads = try Self.threads(of: daemon)
            let spawner = threads.filter { $0.name == "soundscaped-spw" }
            #expect(spawner.count == 1, "one spawner thread: \(threads)")
            let others = threads.filter { $0.name != "soundscaped-spw" }
            #expect(others.count >= 3, "\(threads)")
            for thread in others {
                #expect(thread.filters == (spawner.first?.filters ?? 0) + 1, "\(thread.name) runs without the W^X filter: \(threads)")
            }
            events.stop()
        }
    }

    @Test("signer-memory-deny-write-execute and signer-address-families reach the signer and its health command")
    func signerAsksForLess() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(
                graph: graph, signerArguments: ["--probe-sandbox"],
                daemonArguments: [
                    "--signer-memory-deny-write-execute", "true", "--signer-address-families", "AF_UNIX AF_NETLINK",
                    // The health command gets the same sandbox: it records whether it may open an IP socket.
                    "--signer-health-command",
                    "/bin/sh -c \"/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET)' 2>/dev/null && echo inet=ok > probe-inet || echo inet=denied > probe-inet\"",
                    "--signer-health-interval", "0.2",
                ])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            #expect(try Self.sandbox(of: pid, in: setup) == "wx=denied inet=denied unix=ok")
            try waitUntil(timeout: .seconds(5), "the health command to record what it may do") { setup.file("probe-inet") != nil }
            #expect(setup.file("probe-inet") == "inet=denied\n")
            events.stop()
        }
    }

    @Test("a signer killed by SIGTRAP at start under W^X: status and signerExited name it and say what to change")
    func aCrashAtStartIsNamed() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(
                graph: graph, signerArguments: ["--die-by", "SIGTRAP"],
                daemonArguments: ["--signer-memory-deny-write-execute", "true", "--signer-crash-limit", "2", "--signer-restart-delay", "0.1"])
            let events = try setup.daemon.followEvents()
            try setup.daemon.must("play")
            let exited = try events.next(reason: "signerExited")
            let message = try #require(exited["message"] as? String)
            #expect(message.hasPrefix("killed by signal 5 (SIGTRAP) "), "\(message)")
            #expect(message.contains("set signer-memory-deny-write-execute = no"), "\(message)")
            let failed = try events.next(reason: "signerFailed")
            #expect((failed["message"] as? String)?.contains("(the last: killed by signal 5 (SIGTRAP)") == true, "\(failed)")
            let signer = SignerProtocolTests.signer(failed)
            #expect(signer["lastExitSignal"] as? String == "SIGTRAP")
            #expect((signer["lastExit"] as? String)?.contains("signer-memory-deny-write-execute") == true)
            let status = try setup.daemon.must("status")
            #expect(status.stdout.contains("SIGTRAP"), "\(status.stdout)")
            events.stop()
        }
    }

    /// A real JIT: Node.js (Debian's `nodejs`; CI installs it where the machine has none).
    @Test("a Node.js signer doing JIT work runs under the hardened daemon, and dies, named, under signer W^X")
    func nodeSigner() throws {
        let node = try #require(
            ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "Node.js is not installed (apt-get install nodejs)")
        let script = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/signers/js-signer.mjs").path
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let records = graph.directory.appendingPathComponent("js-records")
            try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
            let config = graph.directory.appendingPathComponent("soundscaped.conf")
            let signer = "signer-command = \(node) \(script)\nsigner-env = FIXTURE_DIR=\(records.path)\nsigner-crash-limit = 1\n"
            try signer.write(to: config, atomically: true, encoding: .utf8)
            let daemon = try Soundscaped(graph: graph, arguments: ["--config", config.path])
            try daemon.start()
            let events = try daemon.followEvents()
            try daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            try waitUntil(timeout: .seconds(20), "the Node.js signer to finish its JIT work") {
                FileManager.default.fileExists(atPath: records.appendingPathComponent("\(pid).js").path)
            }
            #expect(SignerTests.isAlive(pid))
            try (signer + "signer-memory-deny-write-execute = true\n").write(to: config, atomically: true, encoding: .utf8)
            try daemon.must("reload")
            try daemon.must("stop")
            try daemon.must("play")
            let exited = try events.next(reason: "signerExited", timeout: .seconds(20))
            let message = try #require(exited["message"] as? String)
            #expect(message.contains("(SIGTRAP)") || message.contains("(SIGSEGV)"), "\(message)")
            #expect(message.contains("a JIT runtime"), "\(message)")
            events.stop()
        }
    }
}
