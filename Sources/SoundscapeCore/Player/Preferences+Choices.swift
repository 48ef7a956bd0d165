/// What `soundscapectl set` offers a user for each preference: the words its help
/// shows and its shell completion offers, derived from the same enumerations `set`
/// parses, so a new mode or sound is offered once `set` takes it.
/// `PreferencesChoicesTests` holds each offered value to `set` and `value(named:)`.
extension Preferences {
    /// The values `soundscapectl set NAME <TAB>` offers, in the order shown: every value
    /// of a choice or a switch as `value(named:)` writes it, steps of 10 for
    /// `duck-level` (any whole percentage is taken), and `none` for `pinned-sink`
    /// (which takes any sink's `node.name` too); empty for a name that is not one of ``names``.
    public static func choices(for name: String) -> [String] {
        switch name {
        case "interruption-mode": InterruptionMode.allCases.map(\.rawValue)
        case "duck-level": stride(from: 0, through: 100, by: 10).map(String.init)
        case "auto-resume", "keep-awake", "notifications": ["on", "off"]
        case "pinned-sink": ["none"]
        case "signer-down-sound": SignerDownSound.allCases.map(\.rawValue)
        default: []
        }
    }

    /// How a preference's value is written in help text: `pause|duck|ignore`, `0-100`,
    /// `on|off`, `NAME|none`.
    public static func valueSyntax(for name: String) -> String {
        switch name {
        case "duck-level": "0-100"
        case "pinned-sink": "NAME|none"
        default: choices(for: name).joined(separator: "|")
        }
    }
}
