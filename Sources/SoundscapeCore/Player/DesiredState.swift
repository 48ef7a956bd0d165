/// What the user wants. It changes only on a user's command (or a forced
/// fallback), is persisted on every change, and is never altered by what
/// happens to the audio: an interruption or a lost server leaves it intact,
/// so recovery always knows where to return to.
public struct DesiredState: Sendable, Equatable, Codable {
    /// The keep-alive session the user asked for.
    public enum Intent: String, Sendable, Equatable, Codable, CaseIterable {
        /// No session: no sound, and the signer host stops (unless told to keep running).
        case stopped
        /// A session with the soundscape audible.
        case playing
        /// A session kept without sound: the stream is inactive, the signer host runs on.
        case paused
    }

    public var intent: Intent
    /// What plays: one soundscape, or layers.
    public var mix: Mix
    public var volume: Volume

    public init(intent: Intent, mix: Mix, volume: Volume) {
        self.intent = intent
        self.mix = mix
        self.volume = volume
    }

    public init(intent: Intent, soundscape: SoundscapeID, volume: Volume) {
        self.init(intent: intent, mix: Mix(soundscape), volume: volume)
    }

    public init(wantsPlaying: Bool, soundscape: SoundscapeID, volume: Volume) {
        self.init(intent: wantsPlaying ? .playing : .stopped, soundscape: soundscape, volume: volume)
    }

    /// The mix's first soundscape: what names it where one soundscape is named.
    public var soundscape: SoundscapeID { mix.primary }

    /// The user wants to hear the soundscape.
    public var wantsPlaying: Bool { intent == .playing }

    /// The user wants the keep-alive session, audible or paused.
    public var wantsSession: Bool { intent != .stopped }
}
