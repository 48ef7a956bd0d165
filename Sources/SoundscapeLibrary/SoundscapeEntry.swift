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
    /// Why the file cannot play, as its first bytes show (`OpusHeader`: a text file named
    /// `.opus`, an Ogg Vorbis file); nil when it begins as an Ogg Opus stream. Still listed,
    /// marked, so `list` says what is wrong with a file the user dropped in; `play` refuses it.
    public var unplayable: String?
    /// An imported recording's file name, as the manifest has it (`soundscapectl import`).
    public var source: String?
    /// Who made it, under which licence, as the manifest has it (`soundscapectl import --credit`).
    public var credit: String?

    public init(
        id: SoundscapeID, title: String, path: String, gain: Float, origin: Origin, unplayable: String? = nil,
        source: String? = nil, credit: String? = nil
    ) {
        self.id = id
        self.title = title
        self.path = path
        self.gain = gain
        self.origin = origin
        self.unplayable = unplayable
        self.source = source
        self.credit = credit
    }
}
