/// `soundscaped.conf`: one `key = value` per line, `#` starts a comment line.
///
/// (docs/configuration.md has an example with every key.)
///
/// Comments: a `#` at the start of a line, or after a space or a tab, begins a
/// comment that runs to the end of the line, wherever it is; any other `#`
/// belongs to the value (`wss://relay.example/#main`), and `\#` puts a `#` into a
/// value where it would otherwise begin a comment. A comment is never kept in a
/// value. (The rule is the shell's, whose word splitting the command gets.)
///
/// Values are taken literally after trimming (the command is split into words
/// like a shell would, without running one). The keys, what each takes and its
/// default are `Settings`'; this type knows only the file's syntax. Every mistake
/// names its line, and the daemon refuses to start on one: a half-understood config
/// is worse than none.
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

    /// What the file sets; every other setting keeps its default.
    public var values = SettingValues()

    public init() {}

    /// `context` is what parsing may ask of the system (the home directory, a check of a
    /// passphrase file); without one, `~` is refused and no file is looked at.
    public init(parsing text: String, context: SettingContext = SettingContext()) throws(ParseError) {
        var seen = Set<String>()
        // `\.isNewline`, not "\n": Swift reads CRLF as one Character that is not "\n".
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let line = Substring(Self.withoutComment(rawLine)).trimmingSpaces()
            if line.isEmpty { continue }
            guard let (before, after) = SeparatedText.cut(line, at: "=") else {
                throw ParseError(line: number, message: "expected 'key = value', got '\(line)'")
            }
            let key = String(before.trimmingSpaces())
            let value = String(after.trimmingSpaces())
            guard let setting = Settings.named(key), setting.inFile else {
                throw ParseError(line: number, message: "unknown key '\(key)'\(Self.suggestion(for: key))")
            }
            if !setting.isRepeatable {
                guard seen.insert(key).inserted else { throw ParseError(line: number, message: "'\(key)' is set twice") }
            }
            do {
                try setting.take(value, name: key, context: context, into: &values)
            } catch {
                throw ParseError(line: number, message: error.description)
            }
            values.setOrigin("line \(number)", of: setting)
        }
    }

    /// `(did you mean 'signer-command'?)` for a near miss, else the known keys.
    static func suggestion(for key: String) -> String {
        let known = Settings.fileKeys
        let near = known.map { ($0, editDistance($0, key)) }.min { $0.1 < $1.1 }
        if let (match, distance) = near, distance <= max(2, key.count / 5) {
            return " (did you mean '\(match)'?)"
        }
        return " (known: \(known.joined(separator: ", ")))"
    }

    /// Levenshtein distance, for the suggestion.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `line` up to its comment, with `\#` made `#`. Read by Unicode scalars, not
    /// `Character`s: a `#` followed by a combining mark still begins a comment, as
    /// in a shell (`SeparatedText` says why).
    static func withoutComment(_ line: Substring) -> String {
        var result = String.UnicodeScalarView()
        var previous: Unicode.Scalar = " "
        let scalars = line.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if scalar == "\\", next < scalars.endIndex, scalars[next] == "#" {
                result.append("#")
                previous = "#"
                index = scalars.index(after: next)
                continue
            }
            if scalar == "#", previous == " " || previous == "\t" { break }
            result.append(scalar)
            previous = scalar
            index = next
        }
        return String(result)
    }
}
