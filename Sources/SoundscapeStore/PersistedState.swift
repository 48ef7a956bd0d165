#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What survives a restart: the user's volume and soundscape, and whether
/// they wanted it playing (so a crash or reboot resumes the keep-alive).
public struct PersistedState: Sendable, Equatable {
    public var volume: Int
    /// The soundscape playing, or with `layers`, the first layer's: an older build
    /// reading the file plays this one alone. `StateStore.save` writes the first
    /// layer's id here whatever this holds.
    public var soundscape: String?
    public var wantsPlaying: Bool
    /// The session goes on without sound (`wantsPlaying` is false then).
    public var paused: Bool
    /// The soundscapes playing together, each at its level; empty when `soundscape`
    /// plays alone (every file before schema v7, and one whose layers are unreadable
    /// or that an older build has since given another soundscape).
    public var layers: [PersistedLayer]
    /// The saved mix being played, for titles; read back only with `layers`.
    public var mixName: String?

    public init(
        volume: Int, soundscape: String?, wantsPlaying: Bool, paused: Bool = false, layers: [PersistedLayer] = [],
        mixName: String? = nil
    ) {
        self.volume = volume
        self.soundscape = soundscape
        self.wantsPlaying = wantsPlaying
        self.paused = paused
        self.layers = layers
        self.mixName = mixName
    }
}

/// One soundscape of several playing at once, at its level under the master volume.
public struct PersistedLayer: Sendable, Equatable, Codable {
    public var soundscape: String
    /// 0–100.
    public var level: Int

    public init(soundscape: String, level: Int) {
        self.soundscape = soundscape
        self.level = level
    }
}

/// Layers saved under a name, to be played again.
public struct SavedMix: Sendable, Equatable {
    public var name: String
    public var layers: [PersistedLayer]

    public init(name: String, layers: [PersistedLayer]) {
        self.name = name
        self.layers = layers
    }
}

/// Layers as the database holds them (`player_state.layers`, `saved_mixes.layers`):
/// a JSON array, `[{"level":80,"soundscape":"rain"},…]`. Keys a newer build adds to a
/// layer are passed over.
enum LayersColumn {
    static let levels = 0...100

    /// Why `layers` cannot be stored, nil when they can: every level within 0–100 and
    /// every soundscape named. What is stored thus reads back.
    static func problem(_ layers: [PersistedLayer]) -> String? {
        if let layer = layers.first(where: { !levels.contains($0.level) }) {
            return "layer \(layer.soundscape)'s level \(layer.level) is not within 0-100"
        }
        if layers.contains(where: { $0.soundscape.isEmpty }) { return "a layer names no soundscape" }
        return nil
    }

    static func text(_ layers: [PersistedLayer]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Two plain fields: encoding them cannot fail.
        return (try? encoder.encode(layers)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// Nil when `text` is not layers this build can store (not JSON, not an array of
    /// layers, or `problem` refuses them).
    static func layers(_ text: String) -> [PersistedLayer]? {
        guard let layers = try? JSONDecoder().decode([PersistedLayer].self, from: Data(text.utf8)),
            problem(layers) == nil
        else { return nil }
        return layers
    }
}
