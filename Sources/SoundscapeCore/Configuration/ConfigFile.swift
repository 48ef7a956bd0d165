/// `soundscaped.conf`: one `key = value` per line, `#` starts a comment line.
///
/// ```
/// signer-command = /usr/bin/my-signer --relay "wss://relay.example" --verbose
/// signer-directory = /home/me/signer
/// signer-env = RUST_LOG=info
/// signer-env = SIGNER_PROFILE=main
/// signer-keep-running = true
/// signer-stop-timeout = 5
/// signer-liveness-timeout = 30
/// signer-restart-delay = 1
/// signer-crash-limit = 5
/// signer-stdin = file:/home/me/.config/my-signer/passphrase
/// signer-stop-signal = SIGINT
/// signer-health-command = sh -c 'curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected'
/// interruption-roles = Communication, Phone
/// voip-apps = linphone, zoom
/// ```
///
/// Comments: a `#` at the start of a line, or after a space or a tab, begins a
/// comment that runs to the end of the line, wherever it is; any other `#`
/// belongs to the value (`wss://relay.example/#main`), and `\#` puts a `#` into a
/// value where it would otherwise begin a comment. A comment is never kept in a
/// value. (The rule is the shell's, whose word splitting the command gets.)
///
/// Values are taken literally after trimming (the command is split into words
/// like a shell would, without running one). Every mistake names its line, and
/// the daemon refuses to start on one: a half-understood config is worse than none.
public struct ConfigFile: Sendable, Equatable {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }

        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    public var signerCommand: [String]?
    public var signerDirectory: String?
    public var signerEnvironment: [String: String] = [:]
    public var signerKeepRunning: Bool?
    public var signerStopTimeout: Duration?
    public var signerLivenessTimeout: Duration?
    public var signerRestartDelay: Duration?
    public var signerCrashLimit: Int?
    public var signerStdin: SignerStdin?
    public var signerStopSignal: SignerStopSignal?
    public var signerType: SignerType?
    public var signerRestartMaxDelay: Duration?
    public var signerHealthCommand: [String]?
    public var signerHealthInterval: Duration?
    public var signerHealthTimeout: Duration?
    public var signerHealthRetries: Int?
    public var signerRestartOnUnhealthy: Bool?
    public var signerStartGrace: Duration?
    /// `media.role` values that count as a call (comma-separated).
    public var interruptionRoles: Set<String>?
    /// Application names that count as VoIP apps (comma-separated).
    public var voipApplications: Set<String>?
    /// More directories of soundscapes (repeatable), after the built-in ones.
    public var soundscapeDirectories: [String] = []
    /// Most disk space the decoded-loop cache may take, in MiB.
    public var cacheSize: Int?
    /// trace, debug, info, notice, warning, error or critical.
    public var logLevel: String?

    public init() {}

    public static let keys = [
        "signer-command", "signer-directory", "signer-env", "signer-keep-running",
        "signer-stop-timeout", "signer-liveness-timeout", "signer-restart-delay", "signer-crash-limit",
        "signer-stdin", "signer-stop-signal", "signer-type", "signer-restart-max-delay", "signer-health-command",
        "signer-health-interval", "signer-health-timeout", "signer-health-retries", "signer-restart-on-unhealthy",
        "signer-start-grace",
        "interruption-roles", "voip-apps", "soundscapes-dir", "cache-size", "log-level",
    ]

    /// Keys that may be given more than once.
    static let repeatable: Set = ["signer-env", "soundscapes-dir"]
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// `a, b ,c` → {a, b, c}; empty items are dropped.
    public static func list(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { String($0.trimmingSpaces()) }.filter { !$0.isEmpty })
    }

    /// `checkFile` is asked about a `signer-stdin = file:PATH` (nil: the file is fine, else
    /// what is wrong with it); without one, files are not looked at (the parse stays pure).
    public init(parsing text: String, checkFile: ((String) -> String?)? = nil) throws(ParseError) {
        var seen = Set<String>()
        // `\.isNewline`, not "\n": Swift reads CRLF as one Character that is not "\n".
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let line = Substring(Self.withoutComment(rawLine)).trimmingSpaces()
            if line.isEmpty { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ParseError(line: number, message: "expected 'key = value', got '\(line)'")
            }
            let key = String(line[..<equals].trimmingSpaces())
            let value = String(line[line.index(after: equals)...].trimmingSpaces())
            guard Self.keys.contains(key) else {
                throw ParseError(line: number, message: "unknown key '\(key)' (known: \(Self.keys.joined(separator: ", ")))")
            }
            if !Self.repeatable.contains(key) {
                guard seen.insert(key).inserted else { throw ParseError(line: number, message: "'\(key)' is set twice") }
            }
            func fail(_ message: String) -> ParseError { ParseError(line: number, message: message) }
            switch key {
            case "signer-command":
                signerCommand = try Self.command(value, key: key, line: number)
            case "signer-health-command":
                signerHealthCommand = try Self.command(value, key: key, line: number)
            case "signer-directory":
                guard value.hasPrefix("/") else { throw fail("signer-directory must be an absolute path") }
                signerDirectory = value
            case "signer-env":
                guard let split = value.firstIndex(of: "="), split != value.startIndex else {
                    throw fail("signer-env expects NAME=VALUE")
                }
                let name = String(value[..<split])
                guard
                    name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
                    !(name.first?.isNumber ?? true)
                else {
                    throw fail("'\(name)' is not a valid environment variable name")
                }
                signerEnvironment[name] = String(value[value.index(after: split)...])
            case "signer-keep-running":
                signerKeepRunning = try Self.bool(value, key: key, line: number)
            case "signer-restart-on-unhealthy":
                signerRestartOnUnhealthy = try Self.bool(value, key: key, line: number)
            case "signer-stdin":
                let stdin = try Self.stdin(value, key: key, line: number)
                if case .file(let path) = stdin, let problem = checkFile?(path) {
                    throw fail("signer-stdin \(stdin): \(problem)")
                }
                signerStdin = stdin
            case "signer-stop-signal":
                signerStopSignal = try Self.stopSignal(value, key: key, line: number)
            case "signer-type":
                signerType = try Self.signerType(value, key: key, line: number)
            case "signer-restart-max-delay":
                signerRestartMaxDelay = try Self.seconds(value, key: key, line: number)
            case "signer-health-interval":
                signerHealthInterval = try Self.seconds(value, key: key, line: number)
            case "signer-health-timeout":
                signerHealthTimeout = try Self.seconds(value, key: key, line: number)
            case "signer-health-retries":
                signerHealthRetries = try Self.healthRetries(value, key: key, line: number)
            case "signer-start-grace":
                signerStartGrace = try Self.seconds(value, key: key, line: number)
            case "signer-stop-timeout":
                signerStopTimeout = try Self.seconds(value, key: key, line: number)
            case "signer-liveness-timeout":
                signerLivenessTimeout = try Self.seconds(value, key: key, line: number)
            case "signer-restart-delay":
                signerRestartDelay = try Self.seconds(value, key: key, line: number)
            case "interruption-roles":
                interruptionRoles = Self.list(value)
            case "voip-apps":
                voipApplications = Self.list(value)
            case "soundscapes-dir":
                guard value.hasPrefix("/") else { throw fail("soundscapes-dir must be an absolute path") }
                soundscapeDirectories.append(value)
            case "cache-size":
                guard let size = Int(value), (0...1_048_576).contains(size) else {
                    throw fail("cache-size expects a whole number of MiB from 0 to 1048576, got '\(value)'")
                }
                cacheSize = size
            case "log-level":
                guard Self.logLevels.contains(value) else {
                    throw fail("log-level expects one of \(Self.logLevels.joined(separator: ", ")), got '\(value)'")
                }
                logLevel = value
            case "signer-crash-limit":
                signerCrashLimit = try Self.crashLimit(value, key: key, line: number)
            default:
                break
            }
        }
    }

    /// `line` up to its comment, with `\#` made `#`.
    static func withoutComment(_ line: Substring) -> String {
        var result = ""
        var previous: Character = " "
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            let next = line.index(after: index)
            if character == "\\", next < line.endIndex, line[next] == "#" {
                result.append("#")
                previous = "#"
                index = line.index(after: next)
                continue
            }
            if character == "#", previous == " " || previous == "\t" { break }
            result.append(character)
            previous = character
            index = next
        }
        return result
    }

    /// `signer-crash-limit`: 0 never gives up.
    static let crashLimitRange = 0...1000
    static let healthRetryRange = 1...100

    /// A command split into words like a shell would (no shell runs); never empty.
    public static func command(_ text: String, key: String, line: Int) throws(ParseError) -> [String] {
        let words: [String]
        do {
            words = try ShellWords.split(text)
        } catch {
            throw ParseError(line: line, message: "\(key): \(error)")
        }
        guard !words.isEmpty else { throw ParseError(line: line, message: "\(key) is empty") }
        return words
    }

    /// true, yes, on, 1 or false, no, off, 0.
    public static func bool(_ text: String, key: String, line: Int) throws(ParseError) -> Bool {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ParseError(line: line, message: "\(key) expects true or false, got '\(text)'")
        }
    }

    public static func crashLimit(_ text: String, key: String, line: Int) throws(ParseError) -> Int {
        try count(text, key: key, line: line, in: crashLimitRange)
    }

    public static func healthRetries(_ text: String, key: String, line: Int) throws(ParseError) -> Int {
        try count(text, key: key, line: line, in: healthRetryRange)
    }

    /// A whole number within `range`.
    public static func count(_ text: String, key: String, line: Int, in range: ClosedRange<Int>) throws(ParseError) -> Int {
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), range.contains(value) else {
            throw ParseError(line: line, message: "\(key) expects a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    public static func stdin(_ text: String, key: String, line: Int) throws(ParseError) -> SignerStdin {
        try value(SignerStdin(parsing: text), line: line, else: "\(key) expects \(SignerStdin.syntax), got '\(text)'")
    }

    public static func stopSignal(_ text: String, key: String, line: Int) throws(ParseError) -> SignerStopSignal {
        try value(
            SignerStopSignal(parsing: text), line: line,
            else: "\(key): unknown signal '\(text)' (expected \(SignerStopSignal.syntax))")
    }

    public static func signerType(_ text: String, key: String, line: Int) throws(ParseError) -> SignerType {
        try value(SignerType(rawValue: text), line: line, else: "\(key) expects simple or notify, got '\(text)'")
    }

    /// `parsed`, or the error `message` on `line`.
    private static func value<Value>(_ parsed: Value?, line: Int, else message: @autoclosure () -> String)
        throws(ParseError) -> Value
    {
        guard let parsed else { throw ParseError(line: line, message: message()) }
        return parsed
    }

    /// Seconds as a plain positive decimal (`5`, `0.5`), at least a millisecond and at most a day.
    public static func seconds(_ text: String, key: String, line: Int) throws(ParseError) -> Duration {
        let plainDecimal =
            !text.isEmpty && text.filter { $0 == "." }.count <= 1
            && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || $0 == "." }
        guard plainDecimal, let value = Double(text), value <= 86_400 else {
            throw ParseError(line: line, message: "\(key) expects a number of seconds (0.001 ≤ s ≤ 86400), got '\(text)'")
        }
        let milliseconds = Int64((value * 1000).rounded())
        guard milliseconds > 0 else {
            throw ParseError(line: line, message: "\(key) expects a number of seconds (0.001 ≤ s ≤ 86400), got '\(text)'")
        }
        return .milliseconds(milliseconds)
    }
}
