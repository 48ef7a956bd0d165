/// The daemon's setting flags (`--signer-command "…"`, `--cache-size=256`,
/// `--signer-keep-running`), read against the table in `Settings`: each setting is
/// the flag `--KEY`, which takes the value its key takes in the file, and a switch
/// takes none. The flags win over the file (`merged(flags:file:)`).
public enum CommandLineSettings {
    /// `arguments`: the flags as given, in order (what the argument parser did not know).
    public static func parse(_ arguments: [String], context: SettingContext = SettingContext()) throws(SettingError)
        -> SettingValues
    {
        var values = SettingValues()
        var seen = Set<String>()
        var index = arguments.startIndex
        while index < arguments.endIndex {
            try parseOne(arguments, at: &index, context: context, seen: &seen, into: &values)
        }
        return values
    }

    /// The flags that parse, each refused one left out: where the socket and the state
    /// are, for a daemon whose command line is wrong and that says so (`UnconfiguredDaemon`).
    public static func parseLeniently(_ arguments: [String]) -> SettingValues {
        var values = SettingValues()
        var seen = Set<String>()
        var index = arguments.startIndex
        while index < arguments.endIndex {
            do {
                try parseOne(arguments, at: &index, context: SettingContext(), seen: &seen, into: &values)
            } catch {
                continue
            }
        }
        return values
    }

    /// One flag (and its value) from `arguments[index]`, `index` moved past what it took.
    private static func parseOne(
        _ arguments: [String], at index: inout Int, context: SettingContext, seen: inout Set<String>,
        into values: inout SettingValues
    ) throws(SettingError) {
        let argument = arguments[index]
        index += 1
        // By bytes (`SeparatedText`): "--name=\u{306}x" is the flag and its value.
        guard SeparatedText.hasPrefix(argument, "--"), argument.utf8.count > 2 else {
            throw SettingError("unexpected argument '\(argument)'", isUsage: true)
        }
        var name = String(argument.utf8.dropFirst(2))!
        var inline: String?
        if let (before, after) = SeparatedText.cut(name, at: "=") {
            inline = String(after)
            name = String(before)
        }
        guard let setting = Settings.named(name) else {
            throw SettingError("unknown option '--\(name)'\(suggestion(for: name))", isUsage: true)
        }
        if !setting.isRepeatable {
            guard seen.insert(name).inserted else { throw SettingError("\(setting.flag) is given twice", isUsage: true) }
        }
        let text: String
        if setting.isSwitch {
            guard inline == nil else { throw SettingError("\(setting.flag) takes no value", isUsage: true) }
            text = "true"
        } else if let inline {
            text = inline
        } else {
            guard index < arguments.endIndex else {
                throw SettingError("\(setting.flag) expects a value (\(setting.valueName))", isUsage: true)
            }
            text = arguments[index]
            index += 1
        }
        try setting.take(text, name: setting.flag, context: context, into: &values)
        values.setOrigin(setting.flag, of: setting)
    }

    private static func suggestion(for name: String) -> String {
        let near = Settings.all.filter { !$0.isHidden }.map { ($0.key, ConfigFile.editDistance($0.key, name)) }
            .min { $0.1 < $1.1 }
        guard let (match, distance) = near, distance <= max(2, name.count / 5) else { return "" }
        return " (did you mean '--\(match)'?)"
    }
}

extension SettingValues {
    /// The flags over the file: a flag's value wins, and a repeatable setting takes
    /// the file's values and then the flags'. Each keeps where it came from.
    public static func merged(flags: SettingValues, file: SettingValues) -> SettingValues {
        var merged = SettingValues()
        for setting in Settings.all {
            setting.merge(flags: flags, file: file, into: &merged)
            if let origin = flags.origin(of: setting) ?? file.origin(of: setting) {
                merged.setOrigin(origin, of: setting)
            }
        }
        return merged
    }

    /// A reload to `new`: each changed setting a file can set, in words, with when it
    /// takes effect (`signer-start-grace → 15 (now)`). Values of settings that may
    /// hold a secret are not shown (their formats say only names).
    public func changes(to new: SettingValues) -> [String] {
        Settings.all.filter { $0.inFile && !$0.same(self, new) }.map { setting in
            "\(setting.key) → \(setting.describe(in: new)) (\(setting.effect.words))"
        }
    }
}
