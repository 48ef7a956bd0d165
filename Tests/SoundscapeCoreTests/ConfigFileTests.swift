import Foundation
import Testing
import SoundscapeCore

@Suite struct ConfigFileTests {
    /// The error `text` fails with, or nil (recording an issue) when it parses.
    static func error(parsing text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigFile.ParseError? {
        do {
            let config = try ConfigFile(parsing: text)
            Issue.record("parsed into \(config) instead of failing", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesAFullFile() throws {
        let text = """
            # soundscaped.conf

            signer-command = /usr/bin/my-signer --relay "wss://relay.example" --verbose
              signer-directory=/home/me/signer\t
            # environment
            signer-env = RUST_LOG=info
            signer-env=SIGNER_PROFILE=main
            signer-env = EMPTY=
            signer-env = WITH_EQUALS=a=b c
            signer-env = RUST_LOG=debug
            signer-keep-running = yes
            signer-stop-timeout = 2.5
                # indented comment
            signer-liveness-timeout   =   30

            """
        var expected = ConfigFile()
        expected.values.set(Settings.signerCommand, ["/usr/bin/my-signer", "--relay", "wss://relay.example", "--verbose"])
        expected.values.set(Settings.signerDirectory, "/home/me/signer")
        expected.values.set(Settings.signerEnvironment, ["RUST_LOG": "debug", "SIGNER_PROFILE": "main", "EMPTY": "", "WITH_EQUALS": "a=b c"])
        expected.values.set(Settings.signerKeepRunning, true)
        expected.values.set(Settings.signerStopTimeout, .milliseconds(2500))
        expected.values.set(Settings.signerLivenessTimeout, .seconds(30))
        #expect(try ConfigFile(parsing: text) == expected)
    }

    // MARK: Comments: one rule everywhere

    @Test func aHashAfterWhitespaceBeginsACommentInEveryValue() throws {
        let text = """
            signer-command = /usr/bin/my-signer --relay "wss://relay.example" --verbose   # the signer
            signer-directory = /home/me/signer      # working directory (absolute)
            signer-env = RUST_LOG=info	# a tab before it
            signer-keep-running = false             # see below
            signer-stop-timeout = 5 # seconds
            signer-crash-limit = 5 #
            interruption-roles = Communication, Phone  # media.role values
            """
        let config = try ConfigFile(parsing: text)
        #expect(config.values[Settings.signerCommand] == ["/usr/bin/my-signer", "--relay", "wss://relay.example", "--verbose"])
        #expect(config.values[Settings.signerDirectory] == "/home/me/signer")
        #expect(config.values[Settings.signerEnvironment] == ["RUST_LOG": "info"])
        #expect(config.values[Settings.signerKeepRunning] == false)
        #expect(config.values[Settings.signerStopTimeout] == .seconds(5))
        #expect(config.values[Settings.signerCrashLimit] == 5)
        #expect(config.values[Settings.interruptionRoles] == ["Communication", "Phone"])
    }

    @Test func aHashInsideAWordIsPartOfTheValueAndBackslashHashIsLiteral() throws {
        let text = """
            signer-command = my-signer --relay wss://relay.example/#main --tag \\#1 "--note=a \\# b"
            signer-directory = /home/me/signer#2
            signer-env = CHANNEL=\\#general # and a comment
            """
        let config = try ConfigFile(parsing: text)
        #expect(config.values[Settings.signerCommand] == ["my-signer", "--relay", "wss://relay.example/#main", "--tag", "#1", "--note=a # b"])
        #expect(config.values[Settings.signerDirectory] == "/home/me/signer#2")
        #expect(config.values[Settings.signerEnvironment] == ["CHANNEL": "#general"])
    }

    @Test func aCommentIsNeverKeptInAValue() throws {
        // The example docs/signer.md once showed: refused, and worse, a comment kept in a path.
        let config = try ConfigFile(parsing: "signer-directory = /home/me/signer      # working directory (absolute)\n")
        #expect(config.values[Settings.signerDirectory] == "/home/me/signer")
        #expect(try ConfigFile(parsing: "signer-keep-running = false # see below\n").values[Settings.signerKeepRunning] == false)
    }

    /// Every ini example in README.md and docs/ parses, so a documented example can never break again.
    @Test func everyDocumentedExampleParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let documents =
            [root.appendingPathComponent("README.md")]
            + (try FileManager.default.contentsOfDirectory(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "md" })
        var examples = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            var block: [Substring]?
            var start = 0
            for (number, line) in lines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if block == nil, trimmed == "```ini" {
                    block = []
                    start = number + 2
                } else if block != nil, trimmed == "```" {
                    examples += 1
                    let example = block!.joined(separator: "\n")
                    // Drop-ins for systemd units are ini too, but not ours: only examples with our keys.
                    if example.contains("[Service]") || example.contains("[Unit]") {
                        block = nil
                        continue
                    }
                    do {
                        _ = try ConfigFile(parsing: example)
                    } catch {
                        Issue.record("\(document.lastPathComponent):\(start): the example does not parse: \(error)")
                    }
                    block = nil
                } else if block != nil {
                    block!.append(line)
                }
            }
        }
        #expect(examples > 0, "no ini examples found in README.md and docs/")
    }

    @Test(arguments: ["", "\n\n", "# only a comment\n", "   \n\t\n# x = y\n"])
    func emptyFilesSetNothing(text: String) throws {
        #expect(try ConfigFile(parsing: text) == ConfigFile())
    }

    @Test func theDocumentedKeysAreKnown() {
        #expect(
            Set(Settings.fileKeys).isSuperset(of: [
                "signer-command", "signer-directory", "signer-env",
                "signer-keep-running", "signer-stop-timeout",
                "signer-liveness-timeout",
            ]))
        #expect(Set(Settings.fileKeys).count == Settings.fileKeys.count)
    }

    @Test(arguments: [
        ("true", true), ("TRUE", true), ("yes", true), ("On", true), ("1", true),
        ("false", false), ("no", false), ("OFF", false), ("0", false),
    ])
    func booleans(text: String, value: Bool) throws {
        #expect(try ConfigFile(parsing: "signer-keep-running = \(text)").values[Settings.signerKeepRunning] == value)
    }

    @Test(arguments: [
        ("5", Duration.seconds(5)), ("0.5", .milliseconds(500)), ("2.25", .milliseconds(2250)),
        ("0.001", .milliseconds(1)), ("86400", .seconds(86_400)), ("30.0", .seconds(30)),
    ])
    func seconds(text: String, duration: Duration) throws {
        #expect(try SettingParsers.seconds(text, "k", SettingContext()) == duration)
        #expect(try ConfigFile(parsing: "signer-stop-timeout = \(text)").values[Settings.signerStopTimeout] == duration)
        #expect(try ConfigFile(parsing: "signer-liveness-timeout = \(text)").values[Settings.signerLivenessTimeout] == duration)
    }

    // MARK: Errors name their line

    @Test(arguments: [
        ("signer-comand = x", 1, "unknown key 'signer-comand' (did you mean 'signer-command'?)"),
        ("\n# c\n\nsigner-user = me", 4, "unknown key 'signer-user'"),
        ("= x", 1, "unknown key ''"),
        ("signer-command /bin/signer", 1, "expected 'key = value', got 'signer-command /bin/signer'"),
        ("# c\nsigner-keep-running", 2, "expected 'key = value'"),
        ("signer-command = a\nsigner-command = b", 2, "'signer-command' is set twice"),
        ("signer-directory = /a\n\nsigner-directory = /a", 3, "'signer-directory' is set twice"),
        ("signer-keep-running = yes\nsigner-keep-running = yes", 2, "'signer-keep-running' is set twice"),
        ("signer-stop-timeout = 1\nsigner-stop-timeout = 2", 2, "'signer-stop-timeout' is set twice"),
        ("signer-liveness-timeout = 1\nsigner-liveness-timeout = 2", 2, "'signer-liveness-timeout' is set twice"),
        ("signer-command =", 1, "signer-command is empty"),
        ("# c\nsigner-command =    \t", 2, "signer-command is empty"),
        ("signer-command = a 'b", 1, "signer-command: unterminated single quote"),
        ("\nsigner-command = \"b", 2, "signer-command: unterminated double quote"),
        ("signer-command = a \\", 1, "signer-command: a backslash ends the line"),
        ("signer-directory = signer", 1, "signer-directory must be an absolute path"),
        ("signer-directory = ~/signer", 1, "signer-directory: '~/signer' starts with ~, but HOME is not set to expand it"),
        ("signer-directory = $HOME/signer", 1, "signer-directory must be an absolute path"),
        ("signer-directory =", 1, "signer-directory must be an absolute path"),
        ("signer-env = A=1\nsigner-env = 1X=2", 2, "signer-env: '1X' is not a valid environment variable name"),
        ("signer-env = A-B=1", 1, "signer-env: 'A-B' is not a valid environment variable name"),
        ("signer-env = A B=1", 1, "signer-env: 'A B' is not a valid environment variable name"),
        ("signer-env = =x", 1, "signer-env expects NAME=VALUE"),
        ("signer-env = NOVALUE", 1, "signer-env expects NAME=VALUE"),
        ("signer-env =", 1, "signer-env expects NAME=VALUE"),
        ("signer-keep-running = maybe", 1, "signer-keep-running expects true or false, got 'maybe'"),
        ("signer-keep-running =", 1, "signer-keep-running expects true or false, got ''"),
        ("signer-keep-running = 2", 1, "signer-keep-running expects true or false, got '2'"),
    ])
    func errorsNameTheirLine(text: String, line: Int, message: String) throws {
        let error = try #require(Self.error(parsing: text))
        #expect(error.line == line)
        #expect(error.message.hasPrefix(message), "message: \(error.message)")
        #expect(error.description == "line \(line): \(error.message)")
    }

    @Test(
        arguments: ["signer-stop-timeout", "signer-liveness-timeout"],
        ["0", "-1", "-0", "-0.5", "abc", "", "5s", "86401", "86400.5", "1e9", "inf", "nan", "-inf"])
    func badSecondsAreRefused(key: String, value: String) throws {
        let error = try #require(Self.error(parsing: "# c\n\(key) = \(value)"))
        #expect(error.line == 2)
        #expect(error.message == "\(key) expects a number of seconds (0.001 ≤ s ≤ 86400), got '\(value)'")
    }

    @Test func secondsErrorsNameTheSettingTheyAreGiven() {
        #expect(throws: SettingError("signer-stop-timeout expects a number of seconds (0.001 ≤ s ≤ 86400), got '0'")) {
            try SettingParsers.seconds("0", "signer-stop-timeout", SettingContext())
        }
    }

    @Test func theFirstErrorWins() throws {
        let error = try #require(Self.error(parsing: "signer-keep-running = maybe\nbogus = 1"))
        #expect(error.line == 1)
    }

    @Test
    func secondsThatRoundToZeroAreRefused() {
        // A zero liveness timeout would declare the signer hung on every tick.
        #expect(throws: SettingError.self) { try SettingParsers.seconds("0.0004", "k", SettingContext()) }
    }

    @Test
    func crlfLineEndingsAreLineEndings() throws {
        var expected = ConfigFile()
        expected.values.set(Settings.signerCommand, ["/bin/signer"])
        expected.values.set(Settings.signerKeepRunning, true)
        #expect(try ConfigFile(parsing: "signer-command = /bin/signer\r\nsigner-keep-running = true\r\n") == expected)
    }
}
