import ArgumentParser
import Foundation

/// What the modes' commands share (swift-argument-parser reads every command line;
/// `SoundscapeBench` lists the modes).
enum BenchArguments {
    /// Each mode's help flags. The root has none of its own, so that `soundscape-bench --help`
    /// is the default mode's, the full benchmark's, as it always was; `soundscape-bench help`
    /// lists the modes.
    static var helpNames: NameSpecification { [.short, .long] }

    /// A path as the bench passes it on: absolute, `.` and `..` resolved.
    static func path(_ text: String) -> String { URL(fileURLWithPath: text).standardizedFileURL.path }

    /// A figure the bench takes (a length, an interval): finite and not negative.
    static func requireFigure(_ value: Double, _ option: String) throws {
        guard value.isFinite, value >= 0 else { throw ValidationError("\(option) takes a number ≥ 0, not \(value)") }
    }

    /// A count: not negative.
    static func requireCount(_ value: Int, _ option: String) throws {
        guard value >= 0 else { throw ValidationError("\(option) takes a count ≥ 0, not \(value)") }
    }

    /// A comma-separated list's items, each one of `known`.
    static func list(_ text: String, of known: [String], _ option: String) throws -> [String] {
        let items = text.split(separator: ",").map(String.init)
        if let bad = items.first(where: { !known.contains($0) }) {
            throw ValidationError("\(option): unknown '\(bad)' (known: \(known.joined(separator: ", ")))")
        }
        return items
    }
}

/// `--daemon PATH`: the soundscaped a mode measures, by default the one beside this executable.
struct DaemonOption: ParsableArguments {
    @Option(
        help: ArgumentHelp("The soundscaped to measure (default: the one beside this executable).", valueName: "path"),
        completion: .file())
    var daemon: String?

    var path: String { daemon.map(BenchArguments.path) ?? Bench.defaultDaemonPath() }
}
