/// How each kind of value is read, for the table in `Settings`. Every parser gets
/// the name to blame (`signer-stop-timeout`, or `--signer-stop-timeout` for a flag)
/// and says what it expected and what it got. None of them knows a key.
public enum SettingParsers {
    /// Seconds as a plain positive decimal (`5`, `0.5`), at least a millisecond and at most a day.
    public static func seconds(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> Duration {
        let plainDecimal =
            !text.isEmpty && text.filter { $0 == "." }.count <= 1
            && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || $0 == "." }
        let milliseconds = plainDecimal ? Double(text).map { Int64(($0 * 1000).rounded()) } : nil
        guard let milliseconds, milliseconds > 0, milliseconds <= 86_400_000 else {
            throw SettingError("\(name) expects a number of seconds (0.001 ≤ s ≤ 86400), got '\(text)'")
        }
        return .milliseconds(milliseconds)
    }

    /// `seconds`, for a setting whose default is none.
    public static func optionalSeconds(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> Duration? {
        try seconds(text, name, context)
    }

    /// A whole number within `range`.
    public static func count(in range: ClosedRange<Int>) -> @Sendable (String, String, SettingContext) throws(SettingError) -> Int {
        { text, name, _ throws(SettingError) in
            guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), range.contains(value) else {
                throw SettingError("\(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
            }
            return value
        }
    }

    /// true, yes, on, 1 or false, no, off, 0.
    public static func bool(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> Bool {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw SettingError("\(name) expects true or false, got '\(text)'")
        }
    }

    /// One of `choices` (their raw values).
    public static func choice<Value: RawRepresentable & CaseIterable & Sendable>(_: Value.Type)
        -> @Sendable (String, String, SettingContext) throws(SettingError) -> Value where Value.RawValue == String
    {
        { text, name, _ throws(SettingError) in
            guard let value = Value(rawValue: text) else {
                throw SettingError("\(name) expects \(alternatives(Value.allCases.map(\.rawValue))), got '\(text)'")
            }
            return value
        }
    }

    /// `a, b or c`.
    public static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
    }

    /// A command split into words like a shell would (no shell runs), never empty; a
    /// leading `~` of a word is the home directory, as a shell and systemd's `%h` make it.
    /// With `context.checkProgram`, a program that cannot be run is refused here, not
    /// found out at the first start.
    public static func command(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> [String]? {
        let words: [String]
        do {
            words = try ShellWords.split(text, home: context.home)
        } catch {
            throw SettingError("\(name): \(error)")
        }
        guard let program = words.first else { throw SettingError("\(name) is empty") }
        if let problem = context.checkProgram?(program, nil) {
            throw SettingError("\(name): \(problem)")
        }
        return words
    }

    /// An absolute path; a leading `~/` is the home directory.
    public static func path(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> String {
        let expanded = try expandHome(text, name, context)
        guard FilePaths.isAbsolute(expanded) else { throw SettingError("\(name) must be an absolute path, got '\(text)'") }
        return expanded
    }

    public static func optionalPath(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> String? {
        try path(text, name, context)
    }

    /// `[path]`, for a repeatable path.
    public static func paths(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> [String] {
        [try path(text, name, context)]
    }

    /// `~` or `~/…` made `$HOME…`; refused when there is no home to expand it to.
    public static func expandHome(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> String {
        // By bytes (`SeparatedText`): "~/\u{306}x" is in the home directory too.
        guard text.utf8.elementsEqual("~".utf8) || SeparatedText.hasPrefix(text, "~/") else { return text }
        guard let home = context.home, FilePaths.isAbsolute(home) else {
            throw SettingError("\(name): '\(text)' starts with ~, but HOME is not set to expand it")
        }
        return home + String(text.utf8.dropFirst())!
    }

    /// `NAME=VALUE`, as a one-entry dictionary (later names win when accumulated).
    public static func assignment(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> [String: String] {
        guard let (before, after) = SeparatedText.cut(text, at: "="), !before.isEmpty else {
            throw SettingError("\(name) expects NAME=VALUE, got '\(text)'")
        }
        let variable = String(before)
        guard isVariableName(variable) else {
            throw SettingError("\(name): '\(variable)' is not a valid environment variable name")
        }
        return [variable: String(after)]
    }

    /// Letters, digits and `_`, not starting with a digit.
    public static func isVariableName(_ name: some StringProtocol) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// `a, b ,c` → {a, b, c}; empty items are dropped.
    public static func list(_ text: String, _: String, _: SettingContext) -> Set<String> {
        Set(text.split(separator: ",").map { String($0.trimmingSpaces()) }.filter { !$0.isEmpty })
    }

    /// `signer-stdin`: `events`, `null` or `file:PATH`; a file is checked with `context.checkSecretFile`.
    public static func stdin(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> SignerStdin {
        var text = text
        if text.hasPrefix("file:~") { text = "file:" + (try expandHome(String(text.dropFirst(5)), name, context)) }
        guard let stdin = SignerStdin(parsing: text) else {
            throw SettingError("\(name) expects \(SignerStdin.syntax), got '\(text)'")
        }
        if case .file(let path) = stdin, let problem = context.checkSecretFile?(path) {
            throw SettingError("\(name) \(stdin): \(problem)")
        }
        return stdin
    }

    /// `[path]` of a file that holds secrets (`signer-env-file`), checked with `context.checkSecretFile`.
    public static func secretFile(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> [String] {
        let path = try path(text, name, context)
        if let problem = context.checkSecretFile?(path) { throw SettingError("\(name) \(path): \(problem)") }
        return [path]
    }

    /// `[credential]` from `NAME:PATH` or `NAME` (`signer-credential`); a file is checked with
    /// `context.checkSecretFile` (a leading `~/` of its path is the home directory), the
    /// daemon's own credential with `context.checkInheritedCredential`.
    public static func credential(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> [SignerCredential] {
        var text = text
        if let (before, after) = SeparatedText.cut(text, at: ":"), SeparatedText.hasPrefix(after, "~") {
            text = String(before) + ":" + (try expandHome(String(after), name, context))
        }
        let credential: SignerCredential
        switch SignerCredential.parse(text) {
        case .success(let parsed): credential = parsed
        case .failure(let error):
            throw SettingError(error.description.hasPrefix("expects") ? "\(name) \(error)" : "\(name): \(error)")
        }
        switch credential.source {
        case .file(let path):
            if let problem = context.checkSecretFile?(path) { throw SettingError("\(name) \(credential): \(problem)") }
        case .inherited:
            if let problem = context.checkInheritedCredential?(credential.name) { throw SettingError("\(name) \(credential): \(problem)") }
        }
        return [credential]
    }

    /// `AF_UNIX AF_INET` (spaces or commas between), or `none`.
    public static func addressFamilies(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> Set<AddressFamily>? {
        let words = text.split { $0 == " " || $0 == "," || $0 == "\t" }
        if words == ["none"] { return [] }
        var families = Set<AddressFamily>()
        for word in words {
            guard let family = AddressFamily(parsing: word) else {
                throw SettingError(
                    "\(name): unknown address family '\(word)' (expected \(alternatives(AddressFamily.allCases.map(\.rawValue))), or none)")
            }
            families.insert(family)
        }
        guard !families.isEmpty else { throw SettingError("\(name) expects address families or none, got '\(text)'") }
        return families
    }

    /// `signer-health-url`: an `http://` URL to an IP address (`SignerHealthURL`).
    public static func healthURL(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> SignerHealthURL? {
        do {
            return try SignerHealthURL(parsing: text)
        } catch {
            throw SettingError("\(name): \(error)")
        }
    }

    /// `signer-health-json`: `POINTER == VALUE` or `POINTER != VALUE`; the value is checked
    /// with `context.checkJSON` when there is one.
    public static func jsonCondition(_ text: String, _ name: String, _ context: SettingContext) throws(SettingError) -> JSONCondition? {
        let condition: JSONCondition
        do {
            condition = try JSONCondition(parsing: text)
        } catch {
            throw SettingError("\(name): \(error)")
        }
        if let problem = context.checkJSON?(condition.value) {
            throw SettingError("\(name): '\(condition.value)' is not a JSON value (\(problem)); a string needs its quotes: \"ok\"")
        }
        return condition
    }

    public static func stopSignal(_ text: String, _ name: String, _: SettingContext) throws(SettingError) -> SignerStopSignal {
        guard let signal = SignerStopSignal(parsing: text) else {
            throw SettingError("\(name): unknown signal '\(text)' (expected \(SignerStopSignal.syntax))")
        }
        return signal
    }

    // MARK: Formats

    /// How a value that is not there reads (no signer command, no liveness timeout).
    public static let none = "none"

    /// `format`, or `none` for nil.
    public static func optional<Value>(_ format: @escaping @Sendable (Value) -> String) -> @Sendable (Value?) -> String {
        { $0.map(format) ?? none }
    }

    /// `5 s`, `0.5 s`.
    /// A command as it must be written in the file to give these words back: quoted where a
    /// word needs it (`sh -c 'curl -fsS … | jq …'`), and each `#` as `\#`, which a comment
    /// would otherwise begin (`ConfigFile`).
    public static func formatCommand(_ words: [String]) -> String {
        ShellWords.quote(words).split(separator: "#", omittingEmptySubsequences: false).joined(separator: "\\#")
    }

    public static func formatSeconds(_ duration: Duration) -> String {
        let milliseconds = duration.inMilliseconds(rounded: .toNearestOrAwayFromZero)
        let whole = milliseconds / 1000
        let fraction = milliseconds % 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    public static func formatList(_ items: Set<String>) -> String {
        items.isEmpty ? none : items.sorted { $0.lowercased() < $1.lowercased() }.joined(separator: ", ")
    }
}
