#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import Varlink

/// How the CLI prints things for people (and, with --json, for programs).
enum Output {
    static func describe(_ status: PlayerStatus) {
        var rows: [(String, String)] = [
            ("State", status.stateInWords),
            status.layers.count > 1 || status.mix != nil ? ("Mix", status.playsInWords) : ("Soundscape", status.playsInWords),
            ("Volume", "\(status.volume.percent)%"),
            ("Route", status.route ?? (status.noSink ? "— (no sink to play to; waiting for one)" : "—")),
        ]
        if !status.interruptions.isEmpty {
            rows.append(("Interrupted", status.interruptions.joined(separator: ", ") + (status.ducked ? " (ducked)" : "")))
        }
        if let signer = status.signer {
            rows.append(("Signer", signer.summary))
            if let said = signer.status { rows.append(("Signer says", said)) }
        }
        if let sleep = status.sleepInWords { rows.append(("Sleep", sleep)) }
        if let keepAwake = status.keepAwake {
            let text: String =
                switch keepAwake.state {
                case .idle: "on (nothing held: no session runs)"
                case .taking: "on (asking logind)"
                case .held: "on (holding a sleep:idle inhibitor)"
                case .unavailable: "on, but no inhibitor: " + (keepAwake.detail ?? "unknown reason")
                }
            rows.append(("Keep awake", text))
        }
        for (label, value) in rows {
            print(label.padded(to: 12) + value)
        }
    }

    static func describePlay(_ status: PlayerStatus) {
        if let hold = status.playHold {
            writeStderr("soundscapectl: \(hold); see `soundscapectl events`.\n")
        } else {
            print("Playing \(status.playsInWords) at \(status.volume.percent)%" + (status.route.map { " on \($0)" } ?? ""))
        }
    }

    static func describe(_ list: SoundscapeListReply, current: SoundscapeID) {
        let width = (list.soundscapes.map(\.id.count).max() ?? 0) + 2
        for item in list.soundscapes {
            let marker = item.id == current.rawValue ? "*" : " "
            var notes = [item.origin]
            if item.isDefault { notes.append("default") }
            if let why = item.unplayable { notes.append("UNPLAYABLE: \(why): \(item.path)") }
            let credit = item.credit.map { "  — \($0)" } ?? ""
            print("\(marker) \(item.id.padded(to: width))\(item.title)  (\(notes.joined(separator: ", ")))\(credit)")
        }
        let unplayable = list.soundscapes.filter { $0.unplayable != nil }.count
        if unplayable > 0 {
            writeStderr(
                "soundscapectl: \(unplayable) file\(unplayable == 1 ? "" : "s") above cannot play; "
                    + "replace \(unplayable == 1 ? "it" : "them") with Ogg Opus (opusenc makes it).\n")
        }
    }

    /// The saved mixes after the soundscapes, the one that plays marked.
    static func describe(mixes: [SavedMixItem], current: String?) {
        guard !mixes.isEmpty else { return }
        print("\nSaved mixes:")
        let width = (mixes.map(\.name.count).max() ?? 0) + 2
        for mix in mixes {
            print("\(mix.name == current ? "*" : " ") \(mix.name.padded(to: width))\(mix.layersInWords)")
        }
    }

    static func describe(event: PlayerEvent) {
        let time = event.time.description
        let clock = time.count >= 23 ? String(time.dropFirst(11).prefix(12)) : time
        let status = event.status
        var line = "\(clock)  #\(event.seq)  \(event.reason.rawValue)  "
        if event.type == .signer, let signer = status.signer {
            line += "signer \(signer.state.rawValue)" + (signer.pid.map { " pid \($0)" } ?? "")
            if signer.health != .unknown { line += " \(signer.health.rawValue)" }
        } else {
            line += "\(status.state.rawValue)  \(status.soundscape) \(status.volume.percent)%"
            if let route = status.route { line += " → \(route)" }
        }
        if let message = event.message { line += "  (\(message))" }
        print(line)
    }

    static func describe(preferences: JSONValue) {
        let rows: [(String, String)] = [
            ("interruption-mode", preferences["interruptionMode"]?.stringValue ?? "?"),
            ("duck-level", preferences["duckLevel"]?.intValue.map { "\($0)%" } ?? "?"),
            ("auto-resume", preferences["autoResume"]?.boolValue.map { $0 ? "on" : "off" } ?? "?"),
            ("pinned-sink", preferences["pinnedSink"]?.stringValue ?? "none (follow the default)"),
            ("keep-awake", preferences["keepAwake"]?.boolValue.map { $0 ? "on" : "off" } ?? "?"),
            ("notifications", preferences["notifications"]?.boolValue.map { $0 ? "on" : "off" } ?? "?"),
            ("signer-down-sound", preferences["signerDownSound"]?.stringValue ?? "cue"),
        ]
        for (name, value) in rows { print(name.padded(to: 19) + value) }
    }

    static func describe(_ report: HealthReport) {
        print(report.healthy ? "healthy" : "unhealthy")
        for check in report.checks {
            print("  \(check.ok ? "ok  " : "FAIL") \(check.name)" + (check.detail.map { ": \($0)" } ?? ""))
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json(value).utf8))
    }

    static func decodeEvent(_ reply: [String: JSONValue]) throws -> PlayerEvent {
        guard let event = reply["event"] else { throw ControlFailure(message: "event reply without an event") }
        return try JSONDecoder().decode(PlayerEvent.self, from: Data(json(event).utf8))
    }

    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// Events are followed through pipes, where stdout is block-buffered: flush each line.
func fflushStdout() {
    fflush(nil as UnsafeMutablePointer<FILE>?)
}

func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

extension String {
    /// Left-aligned in a column of `width` characters.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
