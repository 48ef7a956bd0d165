import SoundscapeCore

/// One playable soundscape: where its file is and how to present it.
public struct SoundscapeEntry: Sendable, Equatable, Codable {
    public enum Origin: String, Sendable, Codable {
        /// Shipped with soundscaped (the checkout's or the installed `soundscapes/`).
        case builtin
        /// From a `--soundscapes-dir` directory.
        case extra
        /// From `$XDG_DATA_HOME/soundscaped/soundscapes`.
        case user
    }

    public var id: SoundscapeID
    public var title: String
    public var path: String
    /// Linear level trim (0 < gain ≤ 1) that evens out loudness between loops.
    public var gain: Float
    public var origin: Origin

    public init(id: SoundscapeID, title: String, path: String, gain: Float, origin: Origin) {
        self.id = id
        self.title = title
        self.path = path
        self.gain = gain
        self.origin = origin
    }
}
