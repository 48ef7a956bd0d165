/// The loudness every soundscape is brought to: the built-ins with their manifest gains
/// (soundscapes/README.md, "manifest.json"), and every recording `soundscapectl import`
/// makes a soundscape (ITU-R BS.1770 integrated loudness, with a true peak at most -1 dBTP).
public enum SoundscapeLoudness {
    /// LUFS.
    public static let target = -21.2
    /// dBTP.
    public static let truePeakCeiling = -1.0
}
