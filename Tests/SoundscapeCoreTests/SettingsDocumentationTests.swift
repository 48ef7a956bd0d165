import Foundation
import SoundscapeCore
import Testing

/// The docs cannot drift from the table in `Settings`: docs/configuration.md and
/// soundscaped.conf(5) document every key, no key the daemon does not know, and
/// each default as the table has it; and each key is written in one file of
/// `Sources/` only, the table's.
@Suite struct SettingsDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// `| `key` | default | …` rows of the "### Keys" table: key → default cell.
    static func configurationKeysTable() throws -> [String: String] {
        let text = try read("docs/configuration.md")
        let section = try #require(text.components(separatedBy: "### Keys\n").dropFirst().first)
        var rows: [String: String] = [:]
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let key = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            #expect(rows[key] == nil, "\(key) has two rows")
            rows[key] = cells[2]
        }
        return rows
    }

    /// A documented default as the table writes it: a `value` in backticks, or nil for prose (none, —).
    static func documentedDefault(_ cell: String) -> String? {
        guard cell.hasPrefix("`"), cell.hasSuffix("`"), cell.count > 2 else { return nil }
        return String(cell.dropFirst().dropLast())
    }

    @Test func configurationMdHasARowForEveryKeyWithTheTablesDefault() throws {
        let rows = try Self.configurationKeysTable()
        #expect(
            Set(rows.keys) == Set(Settings.fileKeys),
            "documented but unknown: \(Set(rows.keys).subtracting(Settings.fileKeys).sorted()); undocumented: \(Set(Settings.fileKeys).subtracting(rows.keys).sorted())"
        )
        for setting in Settings.all where setting.inFile {
            guard let cell = rows[setting.key] else { continue }
            #expect(
                Self.documentedDefault(cell) == setting.defaultText,
                "\(setting.key): docs say \(cell), the table \(setting.defaultText ?? "no value")")
        }
    }

    /// Every key is set in the example, or shown commented out (`#key = value`, no space
    /// after the `#`) where it is the alternative to one set (`signer-health-command`
    /// beside `signer-health-url`). The example parses and is a configuration the
    /// daemon takes; each line commented out parses on its own.
    @Test func configurationMdsExampleSetsEveryKeyAndParses() throws {
        let text = try Self.read("docs/configuration.md")
        let example = try #require(text.components(separatedBy: "```ini\n").dropFirst().first?.components(separatedBy: "```").first)
        var keys = Set<String>()
        var alternatives: [String] = []
        for line in example.split(separator: "\n") {
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            let commentedOut = trimmed.hasPrefix("#") && Settings.fileKeys.contains { trimmed.dropFirst().hasPrefix($0 + " =") }
            if commentedOut {
                trimmed.removeFirst()
                alternatives.append(trimmed)
            }
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            keys.insert(trimmed[..<equals].trimmingCharacters(in: .whitespaces))
        }
        #expect(keys == Set(Settings.fileKeys), "missing from the example: \(Set(Settings.fileKeys).subtracting(keys).sorted())")
        let context = SettingContext(home: "/home/me")
        let file = try ConfigFile(parsing: example, context: context)
        #expect(SignerConfiguration.healthProblem(file.values).map(\.problem) == nil)
        for line in alternatives {
            _ = try ConfigFile(parsing: line, context: context)
        }
    }

    @Test func configurationMdListsEveryFlagOnlySetting() throws {
        let text = try Self.read("docs/configuration.md")
        let section = try #require(text.components(separatedBy: "## Command line only\n").dropFirst().first)
        let flags = Set(
            section.split(separator: "\n").prefix(while: { !$0.hasPrefix("## ") }).compactMap { line -> String? in
                guard line.hasPrefix("| `--") else { return nil }
                return String(line.dropFirst(3).prefix { $0 != " " && $0 != "`" })
            })
        let expected = Set(Settings.all.filter { !$0.inFile && !$0.isHidden }.map(\.flag))
        #expect(flags == expected)
    }

    /// `.It Cm KEY …` entries of soundscaped.conf(5): key → its default as written (nil: none given).
    static func manualEntries() throws -> [String: String?] {
        let lines = try read("packaging/man/soundscaped.conf.5").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var entries: [String: String?] = [:]
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix(".It Cm "), let key = line.split(separator: " ").dropFirst(2).first.map(String.init) else { continue }
            var value: String?
            while index < lines.count, !lines[index].hasPrefix(".It"), !lines[index].hasPrefix(".El") {
                let entry = lines[index]
                index += 1
                guard entry.hasPrefix("Default:") else { continue }
                var text = entry.dropFirst("Default:".count).trimmingCharacters(in: .whitespaces)
                if text.isEmpty, index < lines.count {
                    // `Default:` then `.Cm false .` or `.Ql Communication, Phone .`
                    text = lines[index].split(separator: " ").dropFirst().joined(separator: " ")
                }
                if text.hasSuffix(" .") { text.removeLast(2) } else if text.hasSuffix(".") { text.removeLast() }
                value = text
            }
            entries[key] = value
        }
        return entries
    }

    @Test func theManualDocumentsEveryKeyWithTheTablesDefault() throws {
        let entries = try Self.manualEntries()
        #expect(
            Set(entries.keys) == Set(Settings.fileKeys),
            "documented but unknown: \(Set(entries.keys).subtracting(Settings.fileKeys).sorted()); undocumented: \(Set(Settings.fileKeys).subtracting(entries.keys).sorted())"
        )
        for setting in Settings.all where setting.inFile {
            guard let documented = entries[setting.key] else { continue }
            let expected = setting.defaultText ?? "none"
            #expect(
                (documented ?? "none") == expected,
                "soundscaped.conf(5) \(setting.key): Default: \(documented ?? "(not given)"), the table: \(expected)")
        }
    }

    /// What a `~` becomes (ShellWordsTests pin it), in one wording for the three places that
    /// document the settings: a command's words, then the paths.
    static let commandTildeRule =
        "An unquoted ~ that starts a word and is alone or followed by / is $HOME; ~user is refused; nothing else is expanded: a quoted or escaped ~, a ~ later in a word, $VAR and globs stay as written."
    static let pathTildeRule =
        "A path's leading ~ or ~/ is $HOME too (signer-directory, signer-env-file, signer-credential's PATH, signer-stdin's file:PATH, soundscapes-dir, --config, --socket, --state-dir, --cache-dir)."

    /// A document as plain text: Markdown without its backticks, a man page without its
    /// comments and roff's `\&` and `\e`; every run of white space one space.
    static func plainText(_ path: String) throws -> String {
        var text = try read(path)
        if path.hasSuffix(".md") {
            text = text.replacingOccurrences(of: "`", with: "")
        } else {
            text = text.split(separator: "\n").filter { !$0.hasPrefix(".\\\"") }.joined(separator: "\n")
                .replacingOccurrences(of: "\\&", with: "").replacingOccurrences(of: "\\e", with: "\\")
        }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// 0.3.0's docs said nothing is expanded, while a leading `~` was the home directory.
    @Test(arguments: ["docs/signer.md", "docs/configuration.md", "packaging/man/soundscaped.conf.5"])
    func theDocsSayWhatATildeBecomes(path: String) throws {
        let text = try Self.plainText(path)
        #expect(text.contains(Self.commandTildeRule), "\(path) does not say: \(Self.commandTildeRule)")
        #expect(text.contains(Self.pathTildeRule), "\(path) does not say: \(Self.pathTildeRule)")
        for wrong in ["nothing is expanded", "is not expanded", "are not expanded"] {
            #expect(!text.lowercased().contains(wrong), "\(path) says '\(wrong)'")
        }
    }

    /// The example the package installs parses, and so does each setting it shows
    /// commented out (`#key = value`), on its own; among them both ways to pass a secret.
    @Test func thePackagedExampleParses() throws {
        let text = try Self.read("packaging/examples/soundscaped.conf")
        let context = SettingContext(home: "/home/me")
        _ = try ConfigFile(parsing: text, context: context)
        var keys = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("#") {
            let setting = String(line.dropFirst())
            guard let key = Settings.fileKeys.first(where: { setting.hasPrefix($0 + " =") }) else { continue }
            keys.insert(key)
            do {
                _ = try ConfigFile(parsing: setting, context: context)
            } catch {
                Issue.record("packaging/examples/soundscaped.conf: '\(line)' does not parse: \(error)")
            }
        }
        #expect(keys.isSuperset(of: ["signer-command", "signer-env-file", "signer-credential"]), "shown: \(keys.sorted())")
    }

    /// `soundscaped --help` adds "repeatable" to a repeatable setting's description, so no
    /// description says it too ("(repeatable). (repeatable; on reload …)").
    @Test func theHelpSaysRepeatableOnceForEachRepeatableSetting() {
        for setting in Settings.all {
            #expect(!setting.help.contains("repeatable"), "\(setting.key): --help adds 'repeatable' itself")
        }
        let help = Settings.helpText(fileSettings: true, width: 10_000) + "\n" + Settings.helpText(fileSettings: false, width: 10_000)
        #expect(help.components(separatedBy: "repeatable").count - 1 == Settings.all.filter { !$0.isHidden && $0.isRepeatable }.count)
    }

    /// Adding a setting is a table entry plus its consumer: no other file under `Sources/`
    /// writes a key (comments may name one).
    @Test func everyKeyIsWrittenInOneSourceFileOnly() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)).compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        var places: [String: Set<String>] = [:]
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for setting in Settings.all where setting.inFile && Self.names(code, setting.key) {
                places[setting.key, default: []].insert(file.lastPathComponent)
            }
        }
        for setting in Settings.all where setting.inFile {
            #expect(places[setting.key] == ["Settings.swift"], "\(setting.key) is written in \(places[setting.key]?.sorted() ?? [])")
        }
    }

    /// Whether `code` has `key` as a whole word (not as part of a longer key).
    static func names(_ code: String, _ key: String) -> Bool {
        var searchRange = code.startIndex..<code.endIndex
        while let found = code.range(of: key, range: searchRange) {
            let before = found.lowerBound == code.startIndex ? nil : code[code.index(before: found.lowerBound)]
            let after = found.upperBound == code.endIndex ? nil : code[found.upperBound]
            let partOfWord: (Character?) -> Bool = { $0.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } ?? false }
            if !partOfWord(before), !partOfWord(after) { return true }
            searchRange = found.upperBound..<code.endIndex
        }
        return false
    }
}
