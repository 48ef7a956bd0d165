import Foundation
import SoundscapeCore
import Testing

/// `Settings.all` is the table every loop reads (the file's keys, the flags, a
/// reload's changes, `--help`): a setting declared in `Settings` but left out of
/// `all` would be parsed by nothing and documented nowhere, silently. Swift cannot
/// list a type's static properties, so the declarations are read from the source.
///
/// Checked to fail: with `logLevel` removed from `all` locally, the first test said
/// "Settings.logLevel is declared but not in Settings.all" and the count differed
/// (35 listed, 36 declared); restored, both pass.
@Suite struct SettingsTableTests {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/SoundscapeCore/Configuration/Settings.swift")

    /// The names of `static let NAME = Setting<…>(` declarations, in order.
    static func declaredNames(in text: String) -> [String] {
        let pattern = /static\s+let\s+(\w+)\s*=\s*Setting\s*</
        return text.matches(of: pattern).map { String($0.output.1) }
    }

    /// The identifiers listed in `static let all: [any AnySetting] = [ … ]`.
    static func listedNames(in text: String) throws -> [String] {
        let start = try #require(text.firstMatch(of: /static\s+let\s+all\s*:\s*\[any AnySetting\]\s*=\s*\[/), "no `all` list found")
        let rest = text[start.range.upperBound...]
        let end = try #require(rest.firstIndex(of: "]"), "the `all` list does not end")
        return rest[..<end].split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    @Test func everyDeclaredSettingIsInTheTable() throws {
        let text = try String(contentsOf: Self.source, encoding: .utf8)
        let declared = Self.declaredNames(in: text)
        let listed = try Self.listedNames(in: text)
        #expect(declared.count >= 30, "the declarations were not found (\(declared.count)): has Settings.swift changed its form?")
        for name in declared {
            #expect(listed.contains(name), "Settings.\(name) is declared but not in Settings.all")
        }
        for name in listed {
            #expect(declared.contains(name), "Settings.all lists \(name), which is not a `static let … = Setting<…>` of Settings")
        }
        #expect(Set(listed).count == listed.count, "Settings.all lists a setting twice: \(listed)")
        #expect(
            Settings.all.count == declared.count,
            "Settings.all has \(Settings.all.count) settings, Settings.swift declares \(declared.count)")
    }

    @Test func everyKeyIsOnceInTheTable() {
        let keys = Settings.all.map(\.key)
        #expect(Set(keys).count == keys.count, "a key is in Settings.all twice: \(keys)")
        for key in keys {
            #expect(Settings.named(key)?.key == key)
        }
    }
}
