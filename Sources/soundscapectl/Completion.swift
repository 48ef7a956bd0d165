#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SoundscapeCore
import SoundscapeSystem
import Varlink

/// What the shell completions (`soundscapectl --generate-completion-script bash|zsh|fish`,
/// installed by scripts/install) offer beyond the subcommands and options: the words
/// come from SoundscapeCore's own lists, and what only the running daemon knows
/// (its soundscapes, the sink it plays to) is asked of it at TAB, briefly.
enum Completion {
    /// `volume <TAB>`: the presets `VolumeChange` parses, and a step each way.
    static let volumeWords = VolumeChange.presets.map(\.name) + ["+10", "-10"]

    /// The positional words of a command line up to the word being completed:
    /// the subcommand first, then its arguments; `--socket PATH`, `--socket=PATH` and
    /// flags left out. `words[0]` is the command itself.
    static func positionals(_ words: [String], before index: Int) -> [String] {
        var result: [String] = []
        var skipValue = false
        for word in words.prefix(min(index, words.count)).dropFirst() {
            if skipValue {
                skipValue = false
            } else if word == "--socket" {
                skipValue = true
            } else if !word.hasPrefix("-") || word == "-" {
                result.append(word)
            }
        }
        return result
    }

    /// The `--socket` a command line names, if any.
    static func socket(in words: [String]) -> String? {
        var found: String?
        for (index, word) in words.enumerated() {
            if word == "--socket", words.indices.contains(index + 1) {
                found = words[index + 1]
            } else if word.hasPrefix("--socket=") {
                found = String(word.dropFirst("--socket=".count))
            }
        }
        return found
    }

    /// `set NAME <TAB>`: that preference's values (`Preferences.choices`); for
    /// `pinned-sink` also the sink the daemon plays to now, when it answers.
    static func preferenceValues(completing words: [String], at index: Int) async -> [String] {
        let arguments = positionals(words, before: index)
        guard arguments.count >= 2, arguments[0] == "set" else { return [] }
        let name = arguments[1]
        var values = Preferences.choices(for: name)
        if name == "pinned-sink", let route = await ask(words, { try await $0.status().route }) ?? nil {
            values.append(route)
        }
        return values
    }

    /// `play <TAB>`: the soundscape ids the running daemon offers; nothing when none answers.
    static func soundscapeIDs(completing words: [String]) async -> [String] {
        await ask(words, { try await $0.soundscapes().soundscapes.filter { $0.unplayable == nil }.map(\.id) }) ?? []
    }

    /// `play <TAB>`: the soundscape ids, then the saved mixes' names.
    static func playableNames(completing words: [String]) async -> [String] {
        await ask(
            words,
            { control in
                try await control.soundscapes().soundscapes.filter { $0.unplayable == nil }.map(\.id)
                    + control.mixes().compactMap { $0["name"]?.stringValue }
            }) ?? []
    }

    /// `save <TAB>`, `delete <TAB>`: the saved mixes' names.
    static func mixNames(completing words: [String]) async -> [String] {
        await ask(words, { try await $0.mixes().compactMap { $0["name"]?.stringValue } }) ?? []
    }

    /// `remove <TAB>`: the imported soundscapes (the daemon's user ones; without a daemon,
    /// the files in the user's folder).
    static func importedIDs(completing words: [String]) async -> [String] {
        if let ids = await ask(words, { try await $0.soundscapes().soundscapes.filter { $0.origin == "user" }.map(\.id) }) {
            return ids
        }
        guard let folder = ImportLocations.standard.user else { return [] }
        return (FileSystem.entries(of: folder) ?? []).filter { $0.hasSuffix(".opus") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// `body`'s answer from the daemon the command line names, or nil when it does
    /// not answer within a second: a TAB must never hang.
    static func ask<T: Sendable>(_ words: [String], _ body: @escaping @Sendable (Control) async throws -> T) async -> T? {
        guard let path = DaemonPaths.socket(explicit: socket(in: words), environment: ProcessInfo.processInfo.environment),
            let client = try? await VarlinkClient.connect(unixPath: path)
        else { return nil }
        defer { Task { await client.close() } }
        let answer = try? await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body(Control(client: client)) }
            group.addTask {
                try await Task.sleep(for: .seconds(1))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        return answer ?? nil
    }
}
