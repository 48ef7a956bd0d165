import Foundation

/// Synthetic soundscapes with exactly known content: a sine whose whole
/// number of cycles fits the loop, so the loop is seamless and its level and
/// pitch are exact — what level and switch assertions need (real noise loops
/// wander by a decibel or more over a second).
public enum ToneLoops {
    /// Writes `<id>.opus` into `directory`: a `frequency` Hz sine at `amplitude`
    /// (both channels), `seconds` long.
    public static func make(
        id: String, frequency: Int, amplitude: Double = 0.5, seconds: Int = 2,
        in directory: URL
    ) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wav = directory.appendingPathComponent("\(id).wav")
        let opus = directory.appendingPathComponent("\(id).opus")
        try ChildProcess.run([
            "sox", "-R", "-n", "-b", "16", "-r", "48000", "-c", "2", wav.path,
            "synth", "\(seconds)", "sine", "\(frequency)", "vol", "\(amplitude)",
        ]).requireSuccess()
        try ChildProcess.run(["opusenc", "--quiet", "--bitrate", "128", wav.path, opus.path]).requireSuccess()
        try FileManager.default.removeItem(at: wav)
        return opus
    }
}
