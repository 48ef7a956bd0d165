/// What the user wants. It changes only on a user's command (or a forced
/// fallback), is persisted on every change, and is never altered by what
/// happens to the audio: an interruption or a lost server leaves it intact,
/// so recovery always knows where to return to.
public struct DesiredState: Sendable, Equatable, Codable {
    public var wantsPlaying: Bool
    public var soundscape: SoundscapeID
    public var volume: Volume

    public init(wantsPlaying: Bool, soundscape: SoundscapeID, volume: Volume) {
        self.wantsPlaying = wantsPlaying
        self.soundscape = soundscape
        self.volume = volume
    }
}
