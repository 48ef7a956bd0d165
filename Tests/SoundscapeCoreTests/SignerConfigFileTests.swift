import Foundation
import Testing
import SoundscapeCore
import Synchronization

/// The config file's keys that make real signers run as they are and check their
/// health (signer-stdin, -stop-signal, -type, -restart-max-delay, -crash-limit 0,
/// -health-*, -restart-on-unhealthy, -start-grace).
@Suite struct SignerConfigFileTests {
    @Test func parsesEveryNewKey() throws {
        let text = """
            signer-command = /usr/bin/bifrost
            signer-stdin = file:/home/me/.config/bifrost/passphrase   # read once, then EOF
            signer-stop-signal = INT
            signer-type = notify
            signer-restart-max-delay = 300
            signer-crash-limit = 0
            signer-health-command = sh -c 'curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected'
            signer-health-interval = 2.5
            signer-health-timeout = 1
            signer-health-retries = 5
            signer-restart-on-unhealthy = no
            signer-start-grace = 20
            """
        let config = try ConfigFile(parsing: text)
        #expect(config.values[Settings.signerStdin] == .file("/home/me/.config/bifrost/passphrase"))
        #expect(config.values[Settings.signerStopSignal] == .int)
        #expect(config.values[Settings.signerType] == .notify)
        #expect(config.values[Settings.signerRestartMaxDelay] == .seconds(300))
        #expect(config.values[Settings.signerCrashLimit] == 0)
        #expect(
            config.values[Settings.signerHealthCommand] == ["sh", "-c", "curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected"])
        #expect(config.values[Settings.signerHealthInterval] == .milliseconds(2500))
        #expect(config.values[Settings.signerHealthTimeout] == .seconds(1))
        #expect(config.values[Settings.signerHealthRetries] == 5)
        #expect(config.values[Settings.signerRestartOnUnhealthy] == false)
        #expect(config.values[Settings.signerStartGrace] == .seconds(20))
    }

    @Test(arguments: [
        ("events", SignerStdin.events), ("null", .null), ("file:/p", .file("/p")),
        ("file:/a b/c#d", .file("/a b/c#d")),
    ])
    func stdinValues(text: String, expected: SignerStdin) throws {
        #expect(try ConfigFile(parsing: "signer-stdin = \(text)").values[Settings.signerStdin] == expected)
        #expect(SignerStdin(parsing: text)?.description == text)
    }

    @Test(arguments: [
        ("signer-stdin = pipe", "signer-stdin expects events, null or file:PATH (an absolute path), got 'pipe'"),
        ("signer-stdin = file:", "signer-stdin expects events, null or file:PATH (an absolute path), got 'file:'"),
        ("signer-stdin = file:relative/pass", "signer-stdin expects events, null or file:PATH (an absolute path), got 'file:relative/pass'"),
        ("signer-stdin = Events", "signer-stdin expects events, null or file:PATH (an absolute path), got 'Events'"),
        (
            "signer-stop-signal = SIGKILL",
            "signer-stop-signal: unknown signal 'SIGKILL' (expected SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2 (the SIG prefix is optional))"
        ),
        ("signer-stop-signal = 15", "signer-stop-signal: unknown signal '15'"),
        ("signer-type = forking", "signer-type expects simple or notify, got 'forking'"),
        ("signer-crash-limit = -1", "signer-crash-limit expects a whole number from 0 to 1000, got '-1'"),
        ("signer-crash-limit = 1001", "signer-crash-limit expects a whole number from 0 to 1000, got '1001'"),
        ("signer-crash-limit = +5", "signer-crash-limit expects a whole number from 0 to 1000, got '+5'"),
        ("signer-health-retries = 0", "signer-health-retries expects a whole number from 1 to 100, got '0'"),
        ("signer-health-command =", "signer-health-command is empty"),
        ("signer-health-command = sh -c 'x", "signer-health-command: unterminated single quote"),
        ("signer-restart-on-unhealthy = sometimes", "signer-restart-on-unhealthy expects true or false, got 'sometimes'"),
        ("signer-health-interval = 0", "signer-health-interval expects a number of seconds"),
        ("signer-health-timeout = 1m", "signer-health-timeout expects a number of seconds"),
        ("signer-restart-max-delay = -3", "signer-restart-max-delay expects a number of seconds"),
        ("signer-start-grace = soon", "signer-start-grace expects a number of seconds"),
    ])
    func badValuesNameTheirLine(text: String, message: String) throws {
        let error = try #require(ConfigFileTests.error(parsing: "signer-command = x\n\n" + text))
        #expect(error.line == 3)
        #expect(error.message.hasPrefix(message), "message: \(error.message)")
    }

    @Test func aStdinFileIsCheckedWhenAskedAndItsProblemNamesTheLine() throws {
        let asked = Mutex<[String]>([])
        let ok = try ConfigFile(
            parsing: "signer-stdin = file:/ok",
            context: SettingContext(checkSecretFile: { path in
                asked.withLock { $0.append(path) }
                return nil
            }))
        #expect(ok.values[Settings.signerStdin] == .file("/ok"))
        #expect(asked.withLock { $0 } == ["/ok"])
        _ = try ConfigFile(
            parsing: "signer-stdin = null",
            context: SettingContext(checkSecretFile: { path in
                asked.withLock { $0.append(path) }
                return "never"
            }))
        #expect(asked.withLock { $0 } == ["/ok"], "only a file is checked")
        do {
            _ = try ConfigFile(
                parsing: "# passphrase\nsigner-stdin = file:/p", context: SettingContext(checkSecretFile: { _ in "it is not a regular file" }))
            Issue.record("a file with a problem was taken")
        } catch {
            #expect(error.description == "line 2: signer-stdin file:/p: it is not a regular file")
        }
    }

    @Test func stdinFileRulesSayWhichCheckFailed() {
        #expect(SignerStdin.fileProblem(isRegular: true, owner: 1000, mode: 0o100600, user: 1000) == nil)
        #expect(SignerStdin.fileProblem(isRegular: true, owner: 1000, mode: 0o100400, user: 1000) == nil)
        #expect(SignerStdin.fileProblem(isRegular: false, owner: 1000, mode: 0o010600, user: 1000) == "it is not a regular file")
        #expect(
            SignerStdin.fileProblem(isRegular: true, owner: 0, mode: 0o100600, user: 1000)
                == "it is owned by uid 0, not by the user running soundscaped (uid 1000)")
        #expect(
            SignerStdin.fileProblem(isRegular: true, owner: 1000, mode: 0o100640, user: 1000)
                == "its group or others have access (mode 0640); chmod 600 it")
        #expect(
            SignerStdin.fileProblem(isRegular: true, owner: 1000, mode: 0o100604, user: 1000)
                == "its group or others have access (mode 0604); chmod 600 it")
    }

    /// Every `ini` block in the docs is a config file the daemon takes.
    @Test(arguments: ["docs/signer.md", "docs/configuration.md"])
    func theDocsExamplesParse(document: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let blocks = text.components(separatedBy: "```ini\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 2)
        for block in blocks {
            #expect(throws: Never.self, "\(document): \(block)") { try ConfigFile(parsing: block) }
        }
    }

    /// The configurations docs/signer.md promises for real signers are the ones
    /// scripts/check-package runs: each `<!-- tested: NAME -->` block parses, and
    /// check-package takes each by its name (`use_config NAME`, through
    /// scripts/doc-config.py), and takes no block the page lacks.
    @Test func theDocumentedSignerConfigsAreTheOnesTheChecksRun() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/signer.md"), encoding: .utf8)
        // check-package's stages, each a file of scripts/check-package.d.
        let stages = root.appendingPathComponent("scripts/check-package.d")
        let check = try FileManager.default.contentsOfDirectory(atPath: stages.path).filter { $0.hasSuffix(".sh") }
            .map { try String(contentsOf: stages.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
        var tested: [String: ConfigFile] = [:]
        for part in page.components(separatedBy: "<!-- tested: ").dropFirst() {
            let name = String(part.prefix { $0 != " " })
            let fence = "\(name) -->\n```ini\n"
            #expect(part.hasPrefix(fence), "the tested block \(name) must follow its marker at once")
            let block = part.dropFirst(fence.count).components(separatedBy: "```")[0]
            tested[name] = try ConfigFile(parsing: block)
        }
        #expect(
            Set(tested.keys) == [
                "nip46-bunker", "bifrost-host", "passphrase-stdin", "igloo-server", "igloo-server-env-file", "keyring-passphrase",
            ])
        let taken = Set(
            check.components(separatedBy: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard words.count >= 2, words[0] == "use_config" else { return nil }
                return String(words[1])
            })
        #expect(taken == Set(tested.keys), "scripts/check-package runs \(taken.sorted()), docs/signer.md marks \(tested.keys.sorted())")
        #expect(tested["bifrost-host"]?.values[Settings.signerStopSignal] == .int)
        #expect(tested["passphrase-stdin"]?.values[Settings.signerStdin] == .file("/home/me/.config/my-signer/passphrase"))
        #expect(tested["nip46-bunker"]?.values[Settings.signerStdin] == .null)
        #expect(tested["igloo-server-env-file"]?.values[Settings.signerEnvironmentFiles] == ["/home/me/.config/igloo-server/credentials.env"])
        let keyring = try #require(tested["keyring-passphrase"]?.values[Settings.signerCommand])
        #expect(keyring.count == 3 && keyring[0] == "sh" && keyring[2].hasPrefix("passphrase=$(secret-tool lookup service my-signer)"))
        // igloo-server is checked by the daemon itself, no command: its status endpoint and the condition.
        let igloo = tested["igloo-server"]?.values
        #expect(igloo?[Settings.signerHealthURL]?.description == "http://127.0.0.1:8002/api/status")
        #expect(igloo?[Settings.signerHealthJSON]?.description == "/health/isConnected == true")
        #expect(igloo?[Settings.signerHealthCommand] == nil)
        #expect(igloo.flatMap(SignerConfiguration.healthProblem) == nil)
    }

    @Test func theNewKeysAreKnownAndOnceOnly() throws {
        for key in [
            "signer-stdin", "signer-stop-signal", "signer-type", "signer-restart-max-delay", "signer-health-command",
            "signer-health-interval", "signer-health-timeout", "signer-health-retries",
            "signer-restart-on-unhealthy", "signer-start-grace",
        ] {
            #expect(Settings.fileKeys.contains(key), "\(key)")
        }
        let error = try #require(ConfigFileTests.error(parsing: "signer-stop-signal = INT\nsigner-stop-signal = TERM"))
        #expect(error.description == "line 2: 'signer-stop-signal' is set twice")
    }
}
