import Testing
import SoundscapeCore

/// The values `soundscapectl set` offers (its help and its shell completion) are
/// values `set` takes and `value(named:)` writes back, for every preference there is.
@Suite struct PreferencesChoicesTests {
    @Test(arguments: Preferences.names)
    func everyOfferedValueIsTaken(name: String) throws {
        let choices = Preferences.choices(for: name)
        #expect(!choices.isEmpty, "\(name) offers nothing")
        #expect(Set(choices).count == choices.count, "\(name) offers a value twice: \(choices)")
        for value in choices {
            var preferences = Preferences.default
            try preferences.set(name, to: value)
            #expect(preferences.value(named: name) == value, "\(name) \(value) is written back differently")
        }
    }

    @Test func choicesAndSwitchesAreOfferedWhole() {
        #expect(Preferences.choices(for: "interruption-mode") == Preferences.InterruptionMode.allCases.map(\.rawValue))
        #expect(Preferences.choices(for: "signer-down-sound") == Preferences.SignerDownSound.allCases.map(\.rawValue))
        for name in ["auto-resume", "keep-awake", "notifications"] {
            #expect(Preferences.choices(for: name) == ["on", "off"])
        }
        #expect(Preferences.choices(for: "pinned-sink") == ["none"])
        #expect(Preferences.choices(for: "duck-level").contains("30"))
        #expect(Preferences.choices(for: "no-such-name").isEmpty)
    }

    @Test func valueSyntax() {
        #expect(Preferences.valueSyntax(for: "interruption-mode") == "pause|duck|ignore")
        #expect(Preferences.valueSyntax(for: "duck-level") == "0-100")
        #expect(Preferences.valueSyntax(for: "keep-awake") == "on|off")
        #expect(Preferences.valueSyntax(for: "pinned-sink") == "NAME|none")
        #expect(Preferences.valueSyntax(for: "signer-down-sound") == "cue|silence|keep")
    }
}
