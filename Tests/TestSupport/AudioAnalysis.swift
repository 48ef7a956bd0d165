import Foundation

/// Level conversions. dBFS here is `20·log10(rms)` relative to a full-scale
/// sample value of 1.0, so a full-scale sine has an RMS of -3.01 dBFS and a
/// 0.5-amplitude sine -9.03 dBFS. Digital silence is `-infinity`.
public enum AudioLevel {
    public static func dBFS(_ linear: Float) -> Float {
        linear > 0 ? 20 * log10(linear) : -Float.infinity
    }

    public static func linear(dBFS: Float) -> Float {
        pow(10, dBFS / 20)
    }
}

/// Location of the largest sample-to-sample jump.
public struct SampleStep: Sendable, Equatable {
    public var value: Float
    /// Time (s) of the second sample of the pair.
    public var time: Double
    public var channel: Int
}

extension AudioClip {
    // MARK: Slicing

    /// Frame index for a time in seconds, clamped to the clip.
    public func frameIndex(at seconds: Double) -> Int {
        max(0, min(frameCount, Int((seconds * Double(sampleRate)).rounded())))
    }

    /// From the first non-zero sample on: a recording's first graph cycle
    /// (2048 frames) can be silent even when the sink plays, and that
    /// zeros → signal edge is no step of the player's.
    public func fromFirstSound() -> AudioClip {
        guard let first = samples.firstIndex(where: { $0 != 0 }) else { return self }
        let frame = first / channels
        return AudioClip(sampleRate: sampleRate, channels: channels, samples: Array(samples[(frame * channels)...]))
    }

    /// The frames between two times (seconds; `to: nil` = end).
    public func slice(from start: Double = 0, to end: Double? = nil) -> AudioClip {
        let a = frameIndex(at: start)
        let b = max(a, end.map(frameIndex(at:)) ?? frameCount)
        return AudioClip(sampleRate: sampleRate, channels: channels, samples: Array(samples[(a * channels)..<(b * channels)]))
    }

    /// One channel, de-interleaved.
    public func channel(_ index: Int) -> [Float] {
        precondition(index >= 0 && index < channels)
        return stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }

    // MARK: Levels

    /// RMS (linear, all channels together) between two times in seconds (`to: nil` = end).
    /// Returns 0 for an empty range.
    public func rms(from start: Double = 0, to end: Double? = nil) -> Float {
        let a = frameIndex(at: start) * channels
        let b = max(a, (end.map(frameIndex(at:)) ?? frameCount) * channels)
        return Self.rms(samples, a..<b)
    }

    /// RMS in dBFS between two times (see `AudioLevel`).
    public func rmsDB(from start: Double = 0, to end: Double? = nil) -> Float {
        AudioLevel.dBFS(rms(from: start, to: end))
    }

    /// Largest absolute sample value.
    public var peak: Float {
        samples.reduce(0) { max($0, abs($1)) }
    }

    public var peakDB: Float { AudioLevel.dBFS(peak) }

    static func rms(_ samples: [Float], _ range: Range<Int>) -> Float {
        guard !range.isEmpty else { return 0 }
        var sum: Double = 0
        for i in range {
            let s = Double(samples[i])
            sum += s * s
        }
        return Float((sum / Double(range.count)).squareRoot())
    }

    /// Frames per analysis window for a window length in milliseconds (at least 1).
    public func windowFrames(ms: Double) -> Int {
        max(1, Int((ms / 1000 * Double(sampleRate)).rounded()))
    }

    /// RMS (linear) of consecutive non-overlapping windows; the last window may be shorter.
    public func windowedRMS(windowMs: Double) -> [Float] {
        let w = windowFrames(ms: windowMs)
        var result: [Float] = []
        result.reserveCapacity(frameCount / w + 1)
        var frame = 0
        while frame < frameCount {
            let end = min(frameCount, frame + w)
            result.append(Self.rms(samples, (frame * channels)..<(end * channels)))
            frame = end
        }
        return result
    }

    /// Stretches (in seconds) where the windowed RMS stays below `thresholdDB`
    /// for at least `minMs`. Use it to prove "no gap" (expect none inside the
    /// playing part) and "silence after stop" (expect one reaching the end).
    ///
    /// Resolution is `windowMs` (default 5 ms); stretch bounds are window bounds.
    public func silentStretches(thresholdDB: Float = -60, minMs: Double = 20, windowMs: Double = 5) -> [Range<Double>] {
        let w = windowFrames(ms: windowMs)
        let threshold = AudioLevel.linear(dBFS: thresholdDB)
        let levels = windowedRMS(windowMs: windowMs)
        var result: [Range<Double>] = []
        var runStart: Int?
        func close(_ endWindow: Int) {
            guard let s = runStart else { return }
            let lower = Double(s * w) / Double(sampleRate)
            let upper = Double(min(frameCount, endWindow * w)) / Double(sampleRate)
            if (upper - lower) * 1000 >= minMs - 1e-9 { result.append(lower..<upper) }
            runStart = nil
        }
        for (i, level) in levels.enumerated() {
            if level < threshold {
                if runStart == nil { runStart = i }
            } else {
                close(i)
            }
        }
        close(levels.count)
        return result
    }

    /// Time (s) of the first sample whose magnitude reaches `thresholdDB`, or nil.
    public func firstNonSilentTime(thresholdDB: Float = -60) -> Double? {
        let threshold = AudioLevel.linear(dBFS: thresholdDB)
        guard let i = samples.firstIndex(where: { abs($0) >= threshold }) else { return nil }
        return Double(i / channels) / Double(sampleRate)
    }

    /// Time (s) just after the last sample whose magnitude reaches `thresholdDB`, or nil.
    public func lastNonSilentTime(thresholdDB: Float = -60) -> Double? {
        let threshold = AudioLevel.linear(dBFS: thresholdDB)
        guard let i = samples.lastIndex(where: { abs($0) >= threshold }) else { return nil }
        return Double(i / channels + 1) / Double(sampleRate)
    }

    /// Time (s) where a fade-out begins: the end of the last window whose RMS is
    /// within `withinDB` of the loudest window. Nil for a clip with no sound.
    /// Lets a test time a fade from the fade itself, whenever the recording began.
    public func fadeStartTime(withinDB: Float = 0.5, windowMs: Double = 5) -> Double? {
        let levels = windowedRMS(windowMs: windowMs)
        guard let loudest = levels.max(), loudest > 0 else { return nil }
        let threshold = loudest * AudioLevel.linear(dBFS: -withinDB)
        guard let last = levels.lastIndex(where: { $0 >= threshold }) else { return nil }
        return Double(min(frameCount, (last + 1) * windowFrames(ms: windowMs))) / Double(sampleRate)
    }

    // MARK: Discontinuities

    /// Largest absolute difference between consecutive samples of the same
    /// channel. A 440 Hz sine at amplitude 0.5 has steps of about 0.029 at
    /// 48 kHz; clicks and hard cuts show up as much larger steps.
    public var maxStep: Float { maxStepLocation?.value ?? 0 }

    /// Where `maxStep` happens (nil for clips shorter than two frames).
    public var maxStepLocation: SampleStep? {
        guard frameCount >= 2 else { return nil }
        var best = SampleStep(value: -1, time: 0, channel: 0)
        for f in 1..<frameCount {
            for c in 0..<channels {
                let d = abs(samples[f * channels + c] - samples[(f - 1) * channels + c])
                if d > best.value {
                    best = SampleStep(value: d, time: Double(f) / Double(sampleRate), channel: c)
                }
            }
        }
        return best
    }

    // MARK: Pitch

    /// Frequency estimate from upward zero crossings of one channel between two
    /// times. Good enough to tell test tones apart (e.g. 440 vs 880 Hz).
    public func estimatedFrequency(channel: Int = 0, from start: Double = 0, to end: Double? = nil) -> Double? {
        let a = frameIndex(at: start)
        let b = end.map(frameIndex(at:)) ?? frameCount
        guard b - a > 2 else { return nil }
        var firstCrossing: Int?
        var lastCrossing = 0
        var crossings = 0
        var previous = samples[a * channels + channel]
        for f in (a + 1)..<b {
            let s = samples[f * channels + channel]
            if previous < 0 && s >= 0 {
                if firstCrossing == nil { firstCrossing = f } else { crossings += 1 }
                lastCrossing = f
            }
            previous = s
        }
        guard let first = firstCrossing, crossings > 0, lastCrossing > first else { return nil }
        return Double(crossings) * Double(sampleRate) / Double(lastCrossing - first)
    }
}
