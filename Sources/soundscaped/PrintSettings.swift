#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary

/// `soundscaped --print-settings [--json]`: every setting from the table, the
/// player's timings that scripts (the soak) reason with, and the events' reasons and
/// types (the IDL's `Event.reason`, from the same enums), so scripts ask the daemon
/// rather than restate its values, and a name they check for that the daemon does not
/// know fails them (scripts/events.py).
enum PrintSettings {
    struct Entry: Encodable {
        let key: String
        let flag: String
        /// A key of soundscaped.conf (false: a flag only).
        let file: Bool
        /// As the docs write it; nil when it has no value.
        let `default`: String?
        let effect: String
        let repeatable: Bool
        let `switch`: Bool
        let valueName: String
        let help: String
    }

    struct Player: Encodable {
        let crossfadeSeconds: Double
        let fadeInSeconds: Double
        let fadeOutSeconds: Double
        let volumeRampSeconds: Double
        /// The signer-down cue's loop (nil where no built-in soundscapes are found).
        let signerDownCue: Cue?
    }

    struct Cue: Encodable {
        let path: String
        let seconds: Double
    }

    /// Every event's `reason` and `type`, as `soundscapectl events --json` writes them, and
    /// every interruption cause (a status's `interruptions`, an `interrupted` event's `cause`).
    struct Events: Encodable {
        let reasons: [String]
        let types: [String]
        let causes: [String]
    }

    struct Document: Encodable {
        let version: String
        let settings: [Entry]
        let player: Player
        let events: Events
    }

    static func print(json: Bool, environment: [String: String], executablePath: String) {
        let entries = Settings.all.filter { !$0.isHidden }.map { setting in
            Entry(
                key: setting.key, flag: setting.flag, file: setting.inFile, default: setting.defaultText,
                effect: setting.effect.rawValue, repeatable: setting.isRepeatable, switch: setting.isSwitch,
                valueName: setting.valueName, help: setting.help)
        }
        let render = RenderSettings()
        let rate = Double(RenderSettings.sampleRate)
        let locations = SoundscapeCatalog.Locations.standard(extra: [], environment: environment, executablePath: executablePath)
        let cue = locations.signerDownCuePath.flatMap { path in
            (try? SoundscapeData(id: .signerDownCue, gain: 1, path: path)).map { Cue(path: path, seconds: $0.duration / .seconds(1)) }
        }
        let player = Player(
            crossfadeSeconds: Double(render.crossfadeFrames) / rate, fadeInSeconds: Double(render.fadeInFrames) / rate,
            fadeOutSeconds: Double(render.fadeOutFrames) / rate, volumeRampSeconds: Double(render.volumeRampFrames) / rate,
            signerDownCue: cue)
        guard json else {
            for entry in entries {
                let place = entry.file ? "file and flag" : "flag only"
                Swift.print("\(entry.flag.padding(30)) \((entry.default ?? "none").padding(12)) \(entry.effect.padding(16)) \(place)")
            }
            Swift.print("crossfade \(player.crossfadeSeconds) s, signer-down cue \(cue.map { "\($0.seconds) s" } ?? "not found")")
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let events = Events(
            reasons: EventReason.allCases.map(\.rawValue), types: EventType.allCases.map(\.rawValue),
            causes: InterruptionCause.allCases.map(\.rawValue))
        let document = Document(version: SoundscapedVersion.string, settings: entries, player: player, events: events)
        let data = (try? encoder.encode(document)) ?? Data()
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
