import Glibc

/// ITU-R BS.1770 integrated loudness from momentary loudness values (400 ms blocks,
/// one every 100 ms: the standard's gating blocks with 75 % overlap), so that the
/// loudness of any stretch of a recording comes from one pass over it.
public enum GatedLoudness {
    /// Frames between two momentary values (100 ms at 48 kHz).
    public static let hopFrames = 4800
    /// Frames a momentary value measures (400 ms at 48 kHz).
    public static let blockFrames = 19200

    /// The gated loudness (LUFS) of `momentary` (LUFS each; -infinity for silence):
    /// blocks under -70 LUFS left out, then those more than 10 LU under the mean of the
    /// rest. Nil when nothing is left (silence).
    public static func integrated<C: Collection>(_ momentary: C) -> Double? where C.Element == Float {
        integrated(weighted: momentary.map { ($0, 1) })
    }

    /// The same with a weight for each block: a block the loop's crossfade plays at half
    /// its power (on average over the fade) counts half.
    public static func integrated(weighted blocks: [(loudness: Float, weight: Double)]) -> Double? {
        func energy(_ loudness: Float) -> Double { pow(10, (Double(loudness) + 0.691) / 10) }
        func mean(_ blocks: [(loudness: Float, weight: Double)]) -> Double? {
            let weight = blocks.reduce(0) { $0 + $1.weight }
            guard weight > 0 else { return nil }
            return -0.691 + 10 * log10(blocks.reduce(0) { $0 + energy($1.loudness) * $1.weight } / weight)
        }
        let absolute = blocks.filter { $0.loudness.isFinite && $0.loudness > -70 && $0.weight > 0 }
        guard let ungated = mean(absolute) else { return nil }
        return mean(absolute.filter { Double($0.loudness) > ungated - 10 })
    }
}

/// Decibels and linear factors.
public enum Decibels {
    public static func gain(_ decibels: Double) -> Double { pow(10, decibels / 20) }
    public static func of(_ linear: Double) -> Double { linear > 0 ? 20 * log10(linear) : -.infinity }
}
