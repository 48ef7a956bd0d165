import Foundation
import TestSupport

/// Recordings for `soundscapectl import`, made with sox at test time: uneven, as field
/// recordings are (a pink-noise bed with brown-noise bursts, a silent head, a slow fade at
/// the tail), at a chosen rate, channel count and level, in a chosen container.
enum ImportMaterial {
    enum Container: String, CaseIterable {
        case wav, flac, ogg, opus, mp3
    }

    /// `name.<container>` in `directory`: `head` s of digital silence, `body` s of the bed
    /// with a burst every 2.9 s, then a fade of `fade` s; `volume` scales it (0.02 is a very
    /// quiet one, 0.5 a loud one).
    static func make(
        _ name: String, container: Container, rate: Int, channels: Int, volume: Double,
        head: Double = 1.2, body: Double = 9, fade: Double = 3, in directory: URL
    ) throws -> URL {
        let work = directory.appendingPathComponent("material-\(name.replacingOccurrences(of: " ", with: "_"))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        func path(_ file: String) -> String { work.appendingPathComponent(file).path }
        func sox(_ arguments: [String]) throws {
            try ChildProcess.run(["sox"] + arguments).requireSuccess()
        }
        let format = ["-r", "\(rate)", "-c", "\(channels)"]
        try sox(["-R", "-n"] + format + [path("bed.wav"), "synth", "\(body + fade)", "pinknoise", "vol", "\(volume)"])
        try sox(
            ["-R", "-n"] + format + [path("burst.wav"), "synth", "0.35", "brownnoise", "vol", "\(volume * 2.5)", "fade", "q", "0.05", "0.35", "0.1"])
        var mix = ["-m", path("bed.wav")]
        for start in stride(from: 0.7, to: body + fade - 0.5, by: 2.9) {
            mix.append("|sox \(path("burst.wav")) -p pad \(start) 0")
        }
        try sox(mix + [path("mixed.wav")])
        try sox(["-n"] + format + [path("head.wav"), "trim", "0", "\(head)"])
        let wav = path("recording.wav")
        try sox([path("head.wav"), path("mixed.wav"), "-b", "16", wav, "fade", "t", "0", "0", "\(fade)"])
        let out = directory.appendingPathComponent("\(name).\(container.rawValue)")
        switch container {
        case .wav: try FileManager.default.copyItem(atPath: wav, toPath: out.path)
        case .flac, .ogg: try sox([wav, out.path])
        case .opus: try ChildProcess.run(["opusenc", "--quiet", wav, out.path]).requireSuccess()
        case .mp3: try ChildProcess.run(["lame", "--quiet", "-b", "192", wav, out.path]).requireSuccess()
        }
        return out
    }
}

/// ITU-R BS.1770 integrated loudness of a 48 kHz clip (K-weighting, 400 ms blocks with 75 %
/// overlap, the absolute and relative gates): written here from the standard, so it checks
/// the importer's libebur128 rather than repeating it.
enum BS1770 {
    static func loudness(_ clip: AudioClip) -> Double? {
        precondition(clip.sampleRate == 48000)
        var weighted = [[Double]](repeating: [], count: clip.channels)
        for channel in 0..<clip.channels {
            var samples = clip.channel(channel).map(Double.init)
            filter(&samples, b: [1.53512485958697, -2.69169618940638, 1.19839281085285], a: [-1.69065929318241, 0.73248077421585])
            filter(&samples, b: [1, -2, 1], a: [-1.99004745483398, 0.99007225036621])
            weighted[channel] = samples
        }
        let block = 19200
        let hop = 4800
        var blocks: [Double] = []
        var start = 0
        while start + block <= clip.frameCount {
            var power = 0.0
            for channel in 0..<clip.channels {
                power += weighted[channel][start..<(start + block)].reduce(0) { $0 + $1 * $1 } / Double(block)
            }
            blocks.append(power)
            start += hop
        }
        func loudness(_ power: Double) -> Double { -0.691 + 10 * log10(power) }
        let absolute = blocks.filter { $0 > 0 && loudness($0) > -70 }
        guard !absolute.isEmpty else { return nil }
        let gate = loudness(absolute.reduce(0, +) / Double(absolute.count)) - 10
        let gated = absolute.filter { loudness($0) > gate }
        return gated.isEmpty ? nil : loudness(gated.reduce(0, +) / Double(gated.count))
    }

    private static func filter(_ samples: inout [Double], b: [Double], a: [Double]) {
        var x1 = 0.0
        var x2 = 0.0
        var y1 = 0.0
        var y2 = 0.0
        for index in samples.indices {
            let x = samples[index]
            let y = b[0] * x + b[1] * x1 + b[2] * x2 - a[0] * y1 - a[1] * y2
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            samples[index] = y
        }
    }
}

/// The seam of a loop, as the loop quality tests judge one: the step across it against
/// the loop's own large steps, the level around it against its own quiet moments.
struct SeamCheck {
    /// The largest step across the seam (any channel).
    var seamStep: Float
    /// The loop's own 99.9th percentile of sample-to-sample steps.
    var ownLargeStep: Float
    /// The quietest 20 ms around the seam (dBFS).
    var seamLevel: Float
    /// The loop's own quiet moments: the 1st percentile of its 20 ms levels (dBFS).
    var ownQuiet: Float

    var clicks: Bool { seamStep > ownLargeStep }
    var dips: Bool { seamLevel < ownQuiet - 1 }

    /// `clip` read as a loop: its last frame runs into its first.
    init(loop clip: AudioClip) {
        self.init(clip, seamAt: 0, loop: clip)
    }

    /// The seam at frame `seam` of `recording` (where the loop's first frame plays), judged
    /// against `loop`'s own steps and levels.
    init(_ recording: AudioClip, seamAt seam: Int, loop: AudioClip) {
        let channels = recording.channels
        func sample(_ frame: Int, _ channel: Int) -> Float {
            let count = recording.frameCount
            return recording.samples[((frame % count + count) % count) * channels + channel]
        }
        seamStep = (0..<channels).map { abs(sample(seam, $0) - sample(seam - 1, $0)) }.max() ?? 0
        var steps: [Float] = []
        steps.reserveCapacity(loop.samples.count)
        for frame in 1..<loop.frameCount {
            for channel in 0..<channels {
                steps.append(abs(loop.samples[frame * channels + channel] - loop.samples[(frame - 1) * channels + channel]))
            }
        }
        steps.sort()
        ownLargeStep = steps.isEmpty ? 0 : steps[Int(Double(steps.count - 1) * 0.999)]
        let window = 960
        func level(from start: Int) -> Float {
            var sum: Float = 0
            for frame in start..<(start + window) {
                for channel in 0..<channels { sum += sample(frame, channel) * sample(frame, channel) }
            }
            return AudioLevel.dBFS((sum / Float(window * channels)).squareRoot())
        }
        seamLevel = stride(from: seam - 2 * window, through: seam + window, by: window / 4).map(level).min() ?? 0
        let levels = loop.windowedRMS(windowMs: 20).map(AudioLevel.dBFS).sorted()
        ownQuiet = levels.isEmpty ? 0 : levels[levels.count / 100]
    }

    var description: String {
        "step across the seam \(seamStep) (own 99.9th percentile \(ownLargeStep)); quietest 20 ms at the seam \(seamLevel) dBFS (own 1st percentile \(ownQuiet) dBFS)"
    }
}
