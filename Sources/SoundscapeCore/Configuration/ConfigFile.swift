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
/// interruption-roles = Communication, Phone
/// voip-apps = linphone, zoom
/// ```
///
/// Values are taken literally after trimming (the command is split into words
/// like a shell would, without running one). Every mistake names its line, and
/// the daemon refuses to start on one: a half-understood config is worse than none.
public struct ConfigFile: Sendable, Equatable {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    public var signerCommand: [String]?
    public var signerDirectory: String?
    public var signerEnvironment: [String: String] = [:]
    public var signerKeepRunning: Bool?
    public var signerStopTimeout: Duration?
    public var signerLivenessTimeout: Duration?
    public var signerRestartDelay: Duration?
    public var signerCrashLimit: Int?
    /// `media.role` values that count as a call (comma-separated).
    public var interruptionRoles: Set<String>?
    /// Application names that count as VoIP apps (comma-separated).
    public var voipApplications: Set<String>?

    public init() {}

    public static let keys = [
        "signer-command", "signer-directory", "signer-env", "signer-keep-running",
        "signer-stop-timeout", "signer-liveness-timeout", "signer-restart-delay", "signer-crash-limit",
        "interruption-roles", "voip-apps",
    ]

    /// `a, b ,c` → {a, b, c}; empty items are dropped.
    public static func list(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { String($0.trimmingSpaces()) }.filter { !$0.isEmpty })
    }

    public init(parsing text: String) throws(ParseError) {
        var seen = Set<String>()
        // `\.isNewline`, not "\n": Swift reads CRLF as one Character that is not "\n".
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let line = rawLine.trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ParseError(line: number, message: "expected 'key = value', got '\(line)'")
            }
            let key = String(line[..<equals].trimmingSpaces())
            let value = String(line[line.index(after: equals)...].trimmingSpaces())
            guard Self.keys.contains(key) else {
                throw ParseError(line: number, message: "unknown key '\(key)' (known: \(Self.keys.joined(separator: ", ")))")
            }
            if key != "signer-env" {
                guard seen.insert(key).inserted else { throw ParseError(line: number, message: "'\(key)' is set twice") }
            }
            func fail(_ message: String) -> ParseError { ParseError(line: number, message: message) }
            switch key {
            case "signer-command":
                let words: [String]
                do {
                    words = try ShellWords.split(value)
                } catch {
                    throw fail("signer-command: \(error)")
                }
                guard !words.isEmpty else { throw fail("signer-command is empty") }
                signerCommand = words
            case "signer-directory":
                guard value.hasPrefix("/") else { throw fail("signer-directory must be an absolute path") }
                signerDirectory = value
            case "signer-env":
                guard let split = value.firstIndex(of: "="), split != value.startIndex else {
                    throw fail("signer-env expects NAME=VALUE")
                }
                let name = String(value[..<split])
                guard name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
                      !(name.first?.isNumber ?? true) else {
                    throw fail("'\(name)' is not a valid environment variable name")
                }
                signerEnvironment[name] = String(value[value.index(after: split)...])
            case "signer-keep-running":
                switch value.lowercased() {
                case "true", "yes", "on", "1": signerKeepRunning = true
                case "false", "no", "off", "0": signerKeepRunning = false
                default: throw fail("signer-keep-running expects true or false, got '\(value)'")
                }
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
            case "signer-crash-limit":
                guard let limit = Int(value), (1...1000).contains(limit) else {
                    throw fail("signer-crash-limit expects a whole number from 1 to 1000, got '\(value)'")
                }
                signerCrashLimit = limit
            default:
                break
            }
        }
    }

    /// Seconds as a plain positive decimal (`5`, `0.5`), at least a millisecond and at most a day.
    public static func seconds(_ text: String, key: String, line: Int) throws(ParseError) -> Duration {
        let plainDecimal = !text.isEmpty && text.filter { $0 == "." }.count <= 1
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
