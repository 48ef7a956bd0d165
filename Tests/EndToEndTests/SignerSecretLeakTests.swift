import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The signer's secrets (docs/signer.md, "Secrets") on a real daemon: known secrets
/// go through each path — an env file, a credential file, the daemon's own credential
/// passed on — and through a reload that changes them, a broken env file, a reload
/// naming a credential the daemon lacks, and a signer killed; the signer gets each
/// (Fixtures/signers/secrets-signer.py records their SHA-256), and no secret is in any
/// output: the daemon's log, `soundscapectl status` and `--json`, `health`, the events,
/// `reload`'s output, and `playerctl metadata` through the desktop companion.
@Suite("Signer secrets", .serialized, .timeLimit(.minutes(2)))
struct SignerSecretLeakTests {
    /// SHA-256's first 16 hex digits, as the fixture records them.
    static func digest(_ text: String, in graph: PipeWireGraph) throws -> String {
        let result = try graph.run(["sh", "-c", "printf %s \"$1\" | sha256sum", "sh", text])
        return "sha256:" + result.stdout.prefix(16)
    }

    @Test("secrets reach the signer through env files and credentials, and no output ever holds one")
    func secretsReachTheSignerAndNothingElse() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let base = graph.directory.path
            let records = base + "/records"
            try FileManager.default.createDirectory(atPath: records, withIntermediateDirectories: true)
            let secret = { (what: String) in "\(what)-\(UUID().uuidString.prefix(13))" }
            let group = secret("group-cred")
            let share = secret("share-cred")
            let file = secret("credential-file")
            let own = secret("unit-credential")
            let newGroup = secret("group-cred-v2")
            let newShare = secret("share-cred-v2")
            let broken = secret("broken-line")
            let secrets = [group, share, file, own, newGroup, newShare, broken]
            func write(_ name: String, _ text: String, mode: mode_t = 0o600) -> String {
                let path = base + "/" + name
                #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
                chmod(path, mode)
                return path
            }
            // The daemon's own credentials, as a unit's LoadCredential= leaves them.
            let ownDirectory = base + "/unit-credentials"
            try FileManager.default.createDirectory(atPath: ownDirectory, withIntermediateDirectories: true)
            _ = write("unit-credentials/pass", own, mode: 0o400)
            let envFile = write("igloo.env", "# igloo-server\nGROUP_CRED=\(group)\nSHARE_CRED=\"\(share)\"\n")
            let credentialFile = write("group.cred", file)
            let fixture = ProductLocator.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/signers/secrets-signer.py").path
            let config = """
                signer-command = /usr/bin/python3 \(fixture) --env GROUP_CRED SHARE_CRED --credential group pass
                signer-env = FIXTURE_DIR=\(records)
                signer-env-file = \(envFile)
                signer-credential = group:\(credentialFile)
                signer-credential = pass
                signer-crash-limit = 0
                signer-restart-delay = 0.2
                signer-restart-max-delay = 0.5
                signer-start-grace = 1

                """
            let configPath = write("soundscaped.conf", config)
            let daemon = try Soundscaped(graph: graph, arguments: ["--config", configPath])
            // What a daemon killed with SIGKILL would have left beside its socket.
            let stale = daemon.socket + ".signer-9.credentials"
            try FileManager.default.createDirectory(atPath: stale, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: stale + "/pass", contents: Data("old".utf8)))
            chmod(stale + "/pass", 0o400)
            chmod(stale, 0o500)
            try daemon.start(environment: ["CREDENTIALS_DIRECTORY": ownDirectory])
            #expect(!FileManager.default.fileExists(atPath: stale), "a crashed daemon's credentials are removed at start")
            var outputs: [(what: String, text: String)] = []

            func record(of pid: Int) throws -> String {
                let path = "\(records)/\(pid).secrets"
                try waitUntil(timeout: .seconds(10), "signer \(pid) to record its secrets\n\(graph.logTail(lines: 20))") {
                    FileManager.default.fileExists(atPath: path)
                }
                return try String(contentsOfFile: path, encoding: .utf8)
            }
            let events = try daemon.followEvents()
            try daemon.must("play")
            let pid = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            let first = try record(of: pid)
            #expect(first.contains("env GROUP_CRED \(try Self.digest(group, in: graph))\n"), "\(first)")
            #expect(first.contains("env SHARE_CRED \(try Self.digest(share, in: graph))\n"), "\(first)")
            #expect(first.contains("credential group \(try Self.digest(file, in: graph)) mode 0400\n"), "\(first)")
            #expect(first.contains("credential pass \(try Self.digest(own, in: graph)) mode 0400\n"), "\(first)")
            let directoryLine = try #require(first.split(separator: "\n").first { $0.hasPrefix("directory ") })
            let directory = String(directoryLine.split(separator: " ")[1])
            #expect(
                directory.hasPrefix(daemon.socket + ".signer-") && directory.hasSuffix(".credentials") && directoryLine.hasSuffix(" mode 0500"),
                "its own directory beside the socket, not the daemon's: \(first)")
            let commandLine = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
            #expect(!secrets.contains { commandLine.contains($0) }, "a secret in the signer's arguments")
            _ = try events.next(reason: "signerStatus")

            // Killed: its credentials are gone before its exit is reported, and the next instance gets them anew.
            kill(pid_t(pid), SIGKILL)
            _ = try events.next(reason: "signerExited")
            #expect(!FileManager.default.fileExists(atPath: directory), "the credentials outlived their instance")
            let second = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            #expect(try record(of: second).contains("credential pass \(try Self.digest(own, in: graph)) mode 0400\n"))

            // A reload that changes them: the env file's contents (read at the next start), and a second file.
            _ = write("igloo.env", "GROUP_CRED='\(newGroup)'\nSHARE_CRED=\(share)\n")
            let secondFile = write("second.env", "SHARE_CRED=\(newShare)\n")
            try config.appending("signer-env-file = \(secondFile)\n").write(toFile: configPath, atomically: true, encoding: .utf8)
            let reload = try daemon.must("reload")
            outputs.append(("soundscapectl reload", reload.stdout + reload.stderr))
            #expect(reload.stdout.contains("signer-env-file → \(envFile), \(secondFile) (the signer's next start)"), "\(reload.stdout)")
            kill(pid_t(second), SIGKILL)
            let third = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted")))
            let changed = try record(of: third)
            #expect(changed.contains("env GROUP_CRED \(try Self.digest(newGroup, in: graph))\n"), "read at the start: \(changed)")
            #expect(changed.contains("env SHARE_CRED \(try Self.digest(newShare, in: graph))\n"), "the later file wins: \(changed)")

            // A reload naming a credential the daemon was not given is refused, naming it.
            try config.appending("signer-credential = absent\n").write(toFile: configPath, atomically: true, encoding: .utf8)
            let refused = try daemon.ctl("reload")
            outputs.append(("refused soundscapectl reload", refused.stdout + refused.stderr))
            #expect(!refused.succeeded)
            #expect(refused.stderr.contains("signer-credential absent: soundscaped was given no credential 'absent'"), "\(refused.stderr)")
            try config.appending("signer-env-file = \(secondFile)\n").write(toFile: configPath, atomically: true, encoding: .utf8)

            // A broken env file: the start fails, named, without its line; signing goes down; fixed, it starts.
            _ = write("igloo.env", "export GROUP_CRED=\(broken)\n")
            kill(pid_t(third), SIGKILL)
            _ = try events.next(reason: "signerExited")
            let failed = try events.next(timeout: .seconds(5), "a failed start") {
                ($0["message"] as? String)?.hasPrefix("could not start:") == true
            }
            #expect(
                failed["message"] as? String
                    == "could not start: signer-env-file \(envFile): line 1: 'export' is a shell's, not part of the EnvironmentFile= syntax: write NAME=VALUE"
            )
            _ = try events.next(reason: "signerDown", timeout: .seconds(5))
            outputs.append(("soundscapectl health while down", (try daemon.ctl("health")).stdout))
            _ = write("igloo.env", "GROUP_CRED=\(group)\nSHARE_CRED=\(share)\n")
            let fixed = try #require(SignerTests.pid(of: try events.next(reason: "signerStarted", timeout: .seconds(5))))
            #expect(try record(of: fixed).contains("env GROUP_CRED \(try Self.digest(group, in: graph))\n"))
            _ = try events.next(reason: "signerRestored", timeout: .seconds(5))

            // Every output, searched for every secret.
            let companion = try graph.spawn(
                try ProductLocator.soundscapedDesktop().path, ["--socket", daemon.socket, "--log-level", "debug"],
                name: "soundscaped-desktop")
            var metadata = ""
            try waitUntil(timeout: .seconds(10), "playerctl metadata to show the signer's status line (last: \(metadata))") {
                guard companion.isRunning else { throw HarnessError("the companion exited\n\(graph.logTail(lines: 20))") }
                metadata = (try? graph.run(["playerctl", "-p", "soundscaped", "metadata"]))?.stdout ?? ""
                return metadata.contains("secrets: 5 present")
            }
            outputs.append(("playerctl metadata", metadata))
            outputs.append(("soundscapectl status", try daemon.must("status").stdout))
            outputs.append(("soundscapectl status --json", try daemon.must("status", "--json").stdout))
            outputs.append(("soundscapectl health", (try daemon.ctl("health")).stdout))
            events.stop()
            let eventLines = try events.seen.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
            outputs.append(("events", eventLines.joined(separator: "\n")))
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped.log"), encoding: .utf8)
            #expect(log.contains("reloaded"), "the log is the daemon's")
            outputs.append(("the daemon's log", log))
            let companionLog = (try? String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped-desktop.log"), encoding: .utf8)) ?? ""
            outputs.append(("the companion's log", companionLog))
            for (what, text) in outputs {
                for leaked in secrets where text.contains(leaked) {
                    Issue.record("\(what) holds the secret \(leaked)")
                }
            }
            #expect(eventLines.count > 10 && log.count > 1000, "the outputs searched are not empty")
        }
    }
}
