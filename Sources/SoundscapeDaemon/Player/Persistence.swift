import SoundscapeCore
import SoundscapeStore

/// The mapping between what the store keeps (plain rows) and the player's
/// types, once in each direction. Reading validates: a value the store holds
/// that this build does not know (a row written by a newer one, or edited by
/// hand) takes its default rather than failing the start.
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

extension PersistedPreferences {
    init(_ preferences: Preferences) {
        self.init(
            interruptionMode: preferences.interruptionMode.rawValue, duckLevel: preferences.duckLevel,
            autoResume: preferences.autoResume, pinnedSink: preferences.pinnedSink,
            keepAwake: preferences.keepAwake, notifications: preferences.notifications,
            signerDownSound: preferences.signerDownSound.rawValue)
    }
}

extension Preferences {
    init(restoring saved: PersistedPreferences?) {
        self = .default
        guard let saved else { return }
        interruptionMode = InterruptionMode(rawValue: saved.interruptionMode) ?? Self.default.interruptionMode
        duckLevel = min(max(saved.duckLevel, 0), 100)
        autoResume = saved.autoResume
        pinnedSink = saved.pinnedSink
        keepAwake = saved.keepAwake
        notifications = saved.notifications
        signerDownSound = SignerDownSound(rawValue: saved.signerDownSound) ?? Self.default.signerDownSound
    }
}
