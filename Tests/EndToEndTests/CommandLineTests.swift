import Foundation
import Testing
import TestSupport

/// soundscapectl's command line as a user types it: `--socket` on either side of
/// the subcommand, `--` before a negative volume, and the exit statuses the README
/// and `soundscapectl --help` (so soundscapectl(1)) promise, each one seen.
@Suite("soundscapectl's command line", .serialized, .timeLimit(.minutes(1)))
struct CommandLineTests {
    static func ctl(_ graph: PipeWireGraph, _ arguments: String...) throws -> ProcessResult {
        try ctl(graph, arguments)
    }

    static func ctl(_ graph: PipeWireGraph, _ arguments: [String]) throws -> ProcessResult {
        try graph.run([try ProductLocator.soundscapectl().path] + arguments, timeout: .seconds(15))
    }

    @Test("--socket before the subcommand and after it reach the same daemon; a wrong one before it is used")
    func socketOnEitherSide() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let before = try Self.ctl(graph, "--socket", daemon.socket, "volume", "35")
            #expect(before.status == 0, "\(before)")
            #expect(before.stdout.contains("Volume 35%"), "\(before)")
            let after = try Self.ctl(graph, "volume", "--socket", daemon.socket)
            #expect(after.status == 0 && after.stdout.contains("35%"), "\(after)")
            let equals = try Self.ctl(graph, "--socket=\(daemon.socket)", "status", "--json")
            #expect(equals.status == 0 && equals.stdout.contains("\"volume\":35"), "\(equals)")
            // The option before the subcommand is the one used, not the default.
            let nowhere = graph.directory.appendingPathComponent("nothing.sock").path
            let wrong = try Self.ctl(graph, "--socket", nowhere, "status")
            #expect(wrong.status == 2, "\(wrong)")
            #expect(wrong.stderr.contains("no answer on \(nowhere)"), "\(wrong)")
        }
    }

    @Test("`volume -- -80` is a step down, as `volume -80` is")
    func dashDashBeforeANegativeVolume() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            try daemon.must("volume", "90")
            let down = try Self.ctl(graph, "volume", "--socket", daemon.socket, "--", "-80")
            #expect(down.status == 0, "\(down)")
            #expect(down.stdout.contains("Volume 10%"), "\(down)")
            let first = try Self.ctl(graph, "--socket", daemon.socket, "volume", "--", "-5")
            #expect(first.status == 0 && first.stdout.contains("Volume 5%"), "\(first)")
        }
    }

    /// The exit statuses `text` lists after `marker`, as numbers: the sentence to its first
    /// period, each clause (split at `;`) that begins with a number naming one.
    static func statuses(in text: String, after marker: String) throws -> Set<Int> {
        let start = try #require(text.range(of: marker), "no '\(marker)' in the text")
        let sentence = text[start.upperBound...].prefix { $0 != "." }
        let clauses = sentence.split(separator: ";").map { $0.drop { $0 == " " } }
        return Set(clauses.compactMap { Int($0.prefix { $0.isNumber }) })
    }

    /// One rule, wherever the mistake is found: an argument no daemon would take is a usage
    /// error (64) whether soundscapectl finds it (`volume 101`) or the daemon does (`set
    /// keep-awake maybe`); a valid request refused is 1; nothing answering is 2. A step
    /// stops at 0 or 100 (`+50` at 90 % gives 100 %); a step past 100 is a usage error, as a
    /// volume past 100 is.
    @Test("every exit status as the README and --help document it, wherever the mistake is found")
    func exitStatusesAsDocumented() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            try daemon.must("volume", "90")
            let socket = daemon.socket
            let nowhere = "/nonexistent/soundscaped/control.sock"
            // (arguments, status, what stderr or stdout says); in order: the refusals must change nothing.
            let cases: [(arguments: [String], status: Int32, says: String)] = [
                (["dance"], 64, "Usage:"),
                (["volume", "1", "2"], 64, "Usage: soundscapectl volume"),
                (["set", "keep-awake"], 64, "Usage: soundscapectl set"),
                (["status", "--jsn"], 64, "Usage:"),
                (["--socket"], 64, "Usage:"),
                (["volume", "--", "-80", "--socket", nowhere], 64, "Usage:"),
                // No subcommand: the help, on stderr.
                ([], 64, "USAGE: soundscapectl [--socket <path>] <subcommand>"),
                (["--socket", socket], 64, "USAGE: soundscapectl [--socket <path>] <subcommand>"),
                // Found by soundscapectl, before the daemon is asked.
                (["volume", "101", "--socket", socket], 64, "Usage: soundscapectl volume"),
                (["volume", "+200", "--socket", socket], 64, "invalid volume '+200'"),
                (["volume", "-101", "--socket", socket], 64, "invalid volume '-101'"),
                // Found by the daemon (InvalidPreference), said the same way.
                (["set", "keep-awake", "maybe", "--socket", socket], 64, "keep-awake must be on or off"),
                (["set", "keep-awake", "maybe", "--socket", socket], 64, "Usage: soundscapectl set"),
                (["set", "loudness", "on", "--socket", socket], 64, "unknown preference 'loudness'"),
                // A valid request refused.
                (["play", "thunder", "--socket", socket], 1, "no soundscape or saved mix named 'thunder'"),
                // Nothing answers.
                (["status", "--socket", nowhere], 2, "no answer on \(nowhere)"),
                // The refusals changed nothing; a step stops at 100.
                (["volume", "--socket", socket], 0, "90%"),
                (["preferences", "--socket", socket], 0, "keep-awake         off"),
                (["volume", "+50", "--socket", socket], 0, "Volume 100%"),
                (["volume", "-100", "--socket", socket], 0, "Volume 0%"),
            ]
            for testCase in cases {
                let result = try Self.ctl(graph, testCase.arguments)
                #expect(result.status == testCase.status, "\(result)")
                #expect((result.stdout + result.stderr).contains(testCase.says), "\(result)")
                if testCase.status == 64 {
                    #expect(result.stderr.contains("Usage:") || result.stderr.contains("USAGE:"), "\(result)")
                    #expect(result.stdout.isEmpty, "\(result)")
                }
            }
        }

        let ctl = try ProductLocator.soundscapectl().path
        let help = try ChildProcess.run([ctl, "--help"]).requireSuccess().stdout
        let helpStatuses = try Self.statuses(in: help.replacingOccurrences(of: "\n", with: " "), after: "Exit status:")
        #expect(helpStatuses == [0, 1, 2, 64], "soundscapectl --help: \(help)")
        #expect(help.contains("USAGE: soundscapectl [--socket <path>] <subcommand>"), "\(help)")
        let readme = try String(contentsOf: ProductLocator.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let readmeStatuses = try Self.statuses(
            in: readme.replacingOccurrences(of: "\n", with: " "), after: "Exit status of `soundscapectl`:")
        #expect(readmeStatuses == helpStatuses, "README.md's exit statuses differ from soundscapectl --help's")
        // Both name the usage errors the daemon finds, too.
        for (name, text) in [("--help", help), ("README.md", readme)] {
            #expect(
                text.replacingOccurrences(of: "\n", with: " ").contains("whether soundscapectl or the daemon finds it"),
                "\(name) does not say a usage error is one whoever finds it")
        }
    }

    @Test("a second soundscaped on the same socket says 'already running' once, naming the first")
    func alreadyRunningSaidOnce() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let first = try daemon.start()
            let second = try graph.run(
                [
                    try ProductLocator.soundscaped().path, "--socket", daemon.socket,
                    "--state-dir", graph.directory.appendingPathComponent("second-state").path,
                ], timeout: .seconds(10))
            #expect(second.status == 1, "\(second)")
            let output = second.stdout + second.stderr
            #expect(output.components(separatedBy: "already running").count - 1 == 1, "said more than once: \(second)")
            #expect(second.stderr.contains("already running (pid \(first.pid)"), "\(second)")
            #expect(first.isRunning)
        }
    }

    @Test("soundscaped run by hand: an unknown flag shows the real usage, and --print-settings says where a default comes from")
    func daemonUsageAndDefaults() throws {
        let daemon = try ProductLocator.soundscaped().path
        let bogus = try ChildProcess.run([daemon, "--bogus"])
        #expect(bogus.status == 64, "\(bogus)")
        #expect(bogus.stderr.contains("unknown option '--bogus'"), "\(bogus.stderr)")
        #expect(bogus.stderr.contains("Usage: soundscaped [--SETTING VALUE | --SWITCH]..."), "\(bogus.stderr)")
        #expect(bogus.stderr.contains("soundscaped --print-settings [--json]"), "\(bogus.stderr)")

        // `none` is a value of --cache-dir (keep no cache), so it is never shown as the default.
        let settings = try ChildProcess.run([daemon, "--print-settings"]).requireSuccess().stdout
        let cache = try #require(settings.split(separator: "\n").first { $0.hasPrefix("--cache-dir ") })
        #expect(cache.contains("$XDG_CACHE_HOME/soundscaped/pcm"), "\(cache)")
        #expect(!cache.contains(" none "), "\(cache)")
        let json = try ChildProcess.run([daemon, "--print-settings", "--json"]).requireSuccess().stdout
        let entries = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["settings"] as? [[String: Any]])
        let entry = try #require(entries.first { $0["key"] as? String == "cache-dir" })
        #expect((entry["default"] as? String)?.hasPrefix("$XDG_CACHE_HOME/soundscaped/pcm") == true, "\(entry)")
    }
}
