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
        self.init(
            volume: desired.volume.percent, soundscape: desired.soundscape.rawValue,
            wantsPlaying: desired.wantsPlaying, paused: desired.intent == .paused)
    }
}

extension DesiredState {
    /// What was saved, over `base`. The saved soundscape is taken only when
    /// `isAvailable` says it still exists; the caller tells the user when not.
    init(restoring saved: PersistedState?, over base: DesiredState, isAvailable: (SoundscapeID) -> Bool) {
        self = base
        guard let saved else { return }
        volume = Volume(clamping: saved.volume)
        intent = saved.paused ? .paused : saved.wantsPlaying ? .playing : .stopped
        if let name = saved.soundscape, let id = SoundscapeID(name), isAvailable(id) {
            soundscape = id
        }
    }
}
