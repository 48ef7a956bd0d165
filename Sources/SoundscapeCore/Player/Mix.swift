/// What plays: one soundscape, or several layered, each at its own level
/// (0–100, on the volume curve, under the master volume).
///
/// A single soundscape is a mix of one layer at 100. The order of the layers
/// is the order the user gave them in; the first names the mix where a single
/// soundscape would be named (a status line, an older client). `name` is the
/// saved mix this is, while it is played unchanged; any change of a layer
/// makes it a mix of its own again.
public struct Mix: Sendable, Hashable, Codable, CustomStringConvertible {
    public struct Layer: Sendable, Hashable, Codable, CustomStringConvertible {
        public var soundscape: SoundscapeID
        /// 0–100; 100 is the soundscape at its own loudness.
        public var level: Int

        public init(_ soundscape: SoundscapeID, level: Int = Mix.fullLevel) {
            self.soundscape = soundscape
            self.level = level
        }

        /// `rain` at full level, else `rain=40`.
        public var description: String {
            level == Mix.fullLevel ? soundscape.rawValue : "\(soundscape.rawValue)=\(level)"
        }

        /// The level as a 0…1 position on the volume curve.
        public var position: Float { Float(level) / 100 }

        /// `{"id": "rain", "level": 80}`, as the status and the IDL name them.
        private enum CodingKeys: String, CodingKey {
            case soundscape = "id"
            case level
        }
    }

    /// The most layers that play at once.
    public static let maximumLayers = 6
    public static let fullLevel = 100

    /// Never empty; no soundscape twice.
    public private(set) var layers: [Layer]
    /// The saved mix this is, unchanged; nil for any other.
    public var name: String?

    /// One soundscape, alone at full level.
    public init(_ soundscape: SoundscapeID) {
        layers = [Layer(soundscape)]
    }

    /// Fails with a message a user can act on: no layer, too many, one twice, a level outside 0–100.
    public init(layers: [Layer], name: String? = nil) throws(MixError) {
        guard !layers.isEmpty else { throw MixError("a mix needs at least one soundscape") }
        guard layers.count <= Self.maximumLayers else {
            throw MixError("a mix has at most \(Self.maximumLayers) layers; \(layers.count) were given")
        }
        var seen = Set<SoundscapeID>()
        for layer in layers {
            guard seen.insert(layer.soundscape).inserted else {
                throw MixError("'\(layer.soundscape)' is in the mix twice")
            }
            guard (0...Self.fullLevel).contains(layer.level) else {
                throw MixError("the level of '\(layer.soundscape)' must be 0-100, not \(layer.level)")
            }
        }
        self.layers = layers
        self.name = name
    }

    /// The first layer's soundscape: what names the mix where one soundscape is named.
    public var primary: SoundscapeID { layers[0].soundscape }

    public var soundscapes: [SoundscapeID] { layers.map(\.soundscape) }

    public var isSingle: Bool { layers.count == 1 && layers[0].level == Self.fullLevel }

    public func level(of soundscape: SoundscapeID) -> Int? {
        layers.first { $0.soundscape == soundscape }?.level
    }

    /// The same layers at the same levels (whatever the name).
    public func sounds(like other: Mix) -> Bool { layers == other.layers }

    /// This mix with `soundscape` at `level`: a layer's level changed, or a layer added last.
    public func setting(_ soundscape: SoundscapeID, to level: Int) throws(MixError) -> Mix {
        var layers = self.layers
        if let index = layers.firstIndex(where: { $0.soundscape == soundscape }) {
            layers[index].level = level
        } else {
            layers.append(Layer(soundscape, level: level))
        }
        return try Mix(layers: layers)
    }

    /// This mix without `soundscape`; the last layer cannot go (stop ends the sound).
    public func removing(_ soundscape: SoundscapeID) throws(MixError) -> Mix {
        guard level(of: soundscape) != nil else { throw MixError("'\(soundscape)' is not in the mix") }
        guard layers.count > 1 else {
            throw MixError("'\(soundscape)' is the only layer; play another soundscape or stop instead")
        }
        return try Mix(layers: layers.filter { $0.soundscape != soundscape })
    }

    /// `rain`, or `rain + fire=40`: how a status line and a log name it.
    public var description: String {
        layers.map(\.description).joined(separator: " + ")
    }

    /// What a title shows: the saved mix's name, else the layers.
    public var title: String { name ?? description }
}

/// Why a mix cannot be made, in words for the user.
public struct MixError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
