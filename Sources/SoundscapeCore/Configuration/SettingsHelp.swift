/// The settings as `soundscaped --help` (and so soundscaped(1)) lists them, made
/// from the table in `Settings`, so the help cannot say other than the code does.
extension Settings {
    /// One entry a setting: the flag and its value, then what it is for, its default
    /// and (for a key of the file) when a reload applies a change. Wrapped here, to
    /// `width` columns with a hanging indent, so the help's own wrapping leaves it be.
    public static func helpText(fileSettings: Bool, width: Int = 78) -> String {
        all.filter { !$0.isHidden && $0.inFile == fileSettings }.map { setting in
            let flag = setting.isSwitch ? setting.flag : "\(setting.flag) <\(setting.valueName)>"
            var details: [String] = []
            if setting.isRepeatable { details.append("repeatable") }
            if let defaultText = setting.defaultText, !setting.isSwitch { details.append("default: \(defaultText)") }
            if setting.inFile { details.append("on reload: \(setting.effect.words)") }
            let suffix = details.isEmpty ? "" : " (\(details.joined(separator: "; ")))"
            return (["  " + flag] + wrap(setting.help + suffix, indent: 6, width: width)).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` columns (a longer word stands alone), each indented.
    static func wrap(_ text: String, indent: Int, width: Int) -> [String] {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, margin.count + line.count + 1 + word.count > width {
                lines.append(margin + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(margin + line) }
        return lines
    }
}
