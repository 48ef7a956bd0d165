import Foundation

/// One `/proc/PID/stat` or `/proc/PID/task/TID/stat` line, split after the
/// command name (which may itself hold spaces and parentheses).
public struct ProcStat {
    public let name: String
    private let rest: [Substring]

    public init?(path: String) {
        guard let text = ProcFS.read(path),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        name = String(text[text.index(after: open)..<close])
        rest = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    /// Field `number` as proc(5) counts them: 3 is the state, 5 the process
    /// group, 41 the scheduling policy.
    public func field(_ number: Int) -> Substring? {
        let index = number - 3
        return index >= 0 && index < rest.count ? rest[index].trimmingCharacters(in: .whitespacesAndNewlines)[...] : nil
    }
}
