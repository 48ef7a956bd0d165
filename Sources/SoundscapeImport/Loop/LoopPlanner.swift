import Glibc
import SoundscapeLibrary

/// What the importer makes of a recording: where the loop starts, how long it is, how
/// long its crossfade, and the gain that brings it to the built-ins' loudness.
///
/// The loop is `[start + crossfade, start + loop)` followed by the crossfade, in which the
/// recording's head `[start, start + crossfade)` fades in (sin) while what followed the
/// loop's end `[start + loop, start + loop + crossfade)` fades out (cos): equal power, as
/// the built-ins are made (soundscapes/README.md). Both joins are then the recording's
/// own consecutive samples (the file starts with the sample that followed the head, and
/// the crossfade starts with the one that followed the loop's end), so neither can click.
public struct LoopPlan: Sendable, Equatable {
    public var start: Int
    public var crossfade: Int
    public var loop: Int
    /// The recording's integrated loudness over what the loop uses (LUFS).
    public var loudness: Double
    /// The gain applied (dB).
    public var gain: Double
    /// Whether the gain would take a peak above `LoopPlanner.ceiling` (so a limiter must hold it).
    public var limits: Bool
    /// Frames of the recording after the trim (what the loop could use).
    public var trimmedEnd: Int

    /// The recording's frames the loop reads: `[start, start + loop + crossfade)`.
    public var used: Range<Int> { start..<(start + loop + crossfade) }
}

public enum LoopPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    case silent
    case tooShort(seconds: Double)

    public var description: String {
        switch self {
        case .silent: "it is silent"
        case .tooShort(let seconds):
            "too short to loop: \(Self.format(seconds)) s of sound after trimming silence and fades, at least \(Self.format(LoopPlanner.minimumSeconds)) s needed"
        }
    }

    static func format(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// The pure decisions of an import, on an `Envelope` and momentary loudness: no samples,
/// no files (unit-tested and fuzzed on synthetic envelopes).
public enum LoopPlanner {
    public static let sampleRate = 48000
    /// The shortest recording that is looped, after trimming (seconds).
    public static let minimumSeconds = 3.0
    /// The crossfade of the built-ins (seconds), shortened for a short recording to a quarter of it.
    public static let crossfadeSeconds = 4.0
    /// How far before the end of the trimmed recording the loop's end may be chosen (at most
    /// a quarter of it).
    public static let searchSeconds = 15.0
    /// Where the trim cuts: blocks of 100 ms quieter than this under the recording's median level.
    public static let trimBelowMedian: Float = 12
    /// The sample peak a raised recording is limited to (dBFS): 2 dB under the -1 dBTP
    /// ceiling, for the peaks between samples and the encoder's own overshoot.
    public static let ceiling = -3.0
    /// The most a quiet recording is raised (dB): beyond it, its own noise would be the sound.
    public static let maximumBoost = 30.0
    /// The longest recording imported (seconds): two hours.
    public static let maximumSeconds = 7200.0

    static let block = Envelope.blockFrames
    /// Blocks per trim window (100 ms).
    static let trimWindow = 10
    /// Blocks the loop search smooths over (50 ms).
    static let smoothing = 5

    public static func plan(
        _ envelope: Envelope, momentary: [Float], target: Double = SoundscapeLoudness.target
    ) throws(LoopPlanError) -> LoopPlan {
        let blocks = envelope.blocks
        // Trim: 100 ms windows against the median of those that are not digital silence.
        let windows = stride(from: 0, to: blocks, by: trimWindow).map { first in
            meanPower(envelope.power, first..<min(blocks, first + trimWindow))
        }
        let audible = windows.filter { $0 > 1e-10 }.sorted()
        guard !audible.isEmpty else { throw .silent }
        let median = audible[audible.count / 2]
        let threshold = median * pow(10, -trimBelowMedian / 10)
        guard let firstWindow = windows.firstIndex(where: { $0 >= threshold }),
            let lastWindow = windows.lastIndex(where: { $0 >= threshold })
        else { throw .silent }
        let firstBlock = firstWindow * trimWindow
        let endBlock = min(envelope.frames / block, (lastWindow + 1) * trimWindow)
        let start = firstBlock * block
        let end = endBlock * block
        let length = max(0, end - start)
        guard Double(length) >= minimumSeconds * Double(sampleRate) else {
            throw .tooShort(seconds: Double(max(0, length)) / Double(sampleRate))
        }

        // The crossfade and the range the loop's end is searched in, in blocks.
        let lengthBlocks = endBlock - firstBlock
        let fade = max(1, min(Int(crossfadeSeconds * Double(sampleRate)) / block, lengthBlocks / 4))
        let range = max(1, min(Int(searchSeconds * Double(sampleRate)) / block, lengthBlocks / 4))
        let latest = endBlock - fade  // the tail window [c, c + fade) must end inside the trim
        let earliest = max(firstBlock + 2 * fade, latest - range)
        let level = smoothedLevels(envelope.power)
        let tone = smoothedLevels(envelope.brightness)
        var best = (cost: Float.infinity, end: latest)
        if earliest <= latest {
            for candidate in earliest...latest {
                var cost: Float = 0
                for j in 0..<fade {
                    let head = firstBlock + j
                    let tail = candidate + j
                    let levelDifference = level[head] - level[tail]
                    let toneDifference = (tone[head] - level[head]) - (tone[tail] - level[tail])
                    cost += levelDifference * levelDifference + 0.5 * toneDifference * toneDifference
                }
                cost /= Float(fade)
                // A little for every second given up, so that of two equal matches the longer loop wins.
                cost += 0.05 * Float(latest - candidate) * Float(block) / Float(sampleRate)
                if cost < best.cost { best = (cost, candidate) }
            }
        }
        let loopEnd = best.end
        let crossfade = fade * block
        let loop = (loopEnd - firstBlock) * block

        // Loudness of the loop as it will play: the momentary blocks inside what it uses, those
        // of the head and of what follows the loop's end at half weight (each is heard at half
        // its power, on average, over the equal-power crossfade that merges them).
        let used = start..<(start + loop + crossfade)
        let weighted: [(loudness: Float, weight: Double)] = momentary.indices.compactMap { index in
            let blockEnd = (index + 1) * GatedLoudness.hopFrames
            let blockStart = blockEnd - GatedLoudness.blockFrames
            guard blockStart >= used.lowerBound && blockEnd <= used.upperBound else { return nil }
            let middle = (blockStart + blockEnd) / 2
            let faded = middle < start + crossfade || middle >= start + loop
            return (momentary[index], faded ? 0.5 : 1)
        }
        guard let loudness = GatedLoudness.integrated(weighted: weighted) ?? GatedLoudness.integrated(momentary) else { throw .silent }
        let gain = min(maximumBoost, target - loudness)
        let usedBlocks = firstBlock..<min(blocks, loopEnd + fade)
        let peak = usedBlocks.map { envelope.peak[$0] }.max() ?? 0
        let limits = Decibels.of(Double(peak)) + gain > ceiling
        return LoopPlan(start: start, crossfade: crossfade, loop: loop, loudness: loudness, gain: gain, limits: limits, trimmedEnd: end)
    }

    static func meanPower(_ power: [Float], _ range: Range<Int>) -> Float {
        guard !range.isEmpty else { return 0 }
        return range.reduce(Float(0)) { $0 + power[$1] } / Float(range.count)
    }

    /// dB of each block's power averaged over `smoothing` blocks from it (fewer at the end).
    static func smoothedLevels(_ power: [Float]) -> [Float] {
        power.indices.map { index in
            10 * log10(meanPower(power, index..<min(power.count, index + smoothing)) + 1e-12)
        }
    }
}

/// The equal-power crossfade's weights at frame `index` of `length`.
public enum Crossfade {
    public static func weights(_ index: Int, of length: Int) -> (fadeIn: Float, fadeOut: Float) {
        let angle = Double.pi / 2 * (Double(index) + 0.5) / Double(length)
        return (Float(sin(angle)), Float(cos(angle)))
    }
}
