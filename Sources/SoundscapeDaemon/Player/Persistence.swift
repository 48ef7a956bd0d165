import SoundscapeCore
import SoundscapeStore

/// The mapping between the saved state the store keeps (a plain row) and the
/// player's `DesiredState`, once in each direction. Reading validates: a value
/// the store holds that this build does not know (a row written by a newer one,
/// or edited by hand) takes its default rather than failing the start.
/// Preferences need no mapping: the store keeps `Preferences` itself, by name
/// (`StateStore.loadPreferences`), and validates it the same way.
extension PersistedState {
    init(_ desired: DesiredState) {
        // The first layer stays in `soundscape` too: an older build reading this row plays it alone.
        self.init(
            volume: desired.volume.percent, soundscape: desired.soundscape.rawValue,
            wantsPlaying: desired.wantsPlaying, paused: desired.intent == .paused,
            layers: desired.mix.isSingle && desired.mix.name == nil ? [] : desired.mix.persisted,
            mixName: desired.mix.name)
    }
}

extension DesiredState {
    /// What was saved, over `base`. The saved soundscape (or each layer) is taken
    /// only when `isAvailable` says it still exists: layers that vanished are left
    /// out, and a mix left with none gives way to `base`'s; the caller tells the
    /// user when what plays is not what was saved.
    init(restoring saved: PersistedState?, over base: DesiredState, isAvailable: (SoundscapeID) -> Bool) {
        self = base
        guard let saved else { return }
        volume = Volume(clamping: saved.volume)
        intent = saved.paused ? .paused : saved.wantsPlaying ? .playing : .stopped
        if let mix = Mix(restoring: saved.layers, name: saved.mixName, isAvailable: isAvailable) {
            self.mix = mix
        } else if let name = saved.soundscape, let id = SoundscapeID(name), isAvailable(id) {
            mix = Mix(id)
        }
    }
}

extension Mix {
    /// The saved layers that still exist, at valid levels; nil when none is left.
    /// The saved name stays only when every layer does.
    init?(restoring layers: [PersistedLayer], name: String?, isAvailable: (SoundscapeID) -> Bool) {
        let kept = layers.compactMap { saved -> Layer? in
            guard let id = SoundscapeID(saved.soundscape), isAvailable(id) else { return nil }
            return Layer(id, level: min(max(saved.level, 0), Mix.fullLevel))
        }
        var unique: [Layer] = []
        for layer in kept where !unique.contains(where: { $0.soundscape == layer.soundscape }) { unique.append(layer) }
        guard let mix = try? Mix(layers: Array(unique.prefix(Mix.maximumLayers)), name: unique.count == layers.count ? name : nil)
        else { return nil }
        self = mix
    }

    /// As the store keeps it.
    var persisted: [PersistedLayer] {
        layers.map { PersistedLayer(soundscape: $0.soundscape.rawValue, level: $0.level) }
    }
}
