import Foundation

/// What a sink carries, told apart window by window as it arrives: the
/// soundscape, the signer-down cue, or silence. CI's real-signer check
/// (scripts/check-bunker.py) and the soak decide with it, through
/// `soundscape-bench sink-sound` (Benchmarks/SoundscapeBench/SinkSound.swift).
///
/// The soundscapes are noise (broadband); the cue (soundscapes/cues/signer-down.opus,
/// made by scripts/make-soundscapes) is silence with a soft chime every 5 s: E5
/// then A5, each with its octave. Their frequencies are read from the
/// soundscapes' manifest.json (`cues`), where make-soundscapes writes them. Each
/// window is judged by its RMS level and the share of its power at those tones
/// (Goertzel, Hann window):
///
/// - `silence`: RMS below -60 dBFS;
/// - `cue`: at least 20 % of its power at the chime's tones (a note of the chime
///   puts 60–95 % there, the soundscapes' noise under 5 %);
/// - `soundscape`: audible, under 20 % there, and so was the window before;
/// - `sound`: audible, under 20 % there, after a window that was not: the onset
///   of a note whose attack fills only the window's edge (where the Hann window
///   hides it) looks like this, so one such window alone decides nothing
///   (measured over the cue at every alignment of 100 ms windows: never two in a row).
///
/// A crossfade between the two is `soundscape` until the noise has faded out (the
/// cue begins with 0.7 s of silence, longer than the player's 0.6 s crossfade).
/// Windows are classified in order: a window's kind depends on the one before.
public struct CueClassifier: Sendable {
    public enum Kind: String, Sendable, Codable {
        case silence, cue, soundscape, sound
    }

    public struct Verdict: Sendable, Equatable {
        /// dBFS (`-infinity` for digital silence).
        public var rmsDB: Double
        /// The chime's share of the window's power, 0…1 (0 for silence).
        public var share: Double
        public var kind: Kind

        public init(rmsDB: Double, share: Double, kind: Kind) {
            self.rmsDB = rmsDB
            self.share = share
            self.kind = kind
        }
    }

    public static let silenceDB = -60.0
    public static let cueShare = 0.2
    public static let rate = 48_000.0

    public let frames: Int
    public let tones: [Double]
    private let window: [Double]
    private let gain: Double
    private let coefficients: [Double]
    public private(set) var previous: Kind = .silence

    /// Windows of `frames` mono samples (-1…1) at `rate`; `tones` in Hz, by default the
    /// signer-down cue's from the checkout's manifest (`signerDownTones()`).
    public init(frames: Int, rate: Double = CueClassifier.rate, tones: [Double]) {
        precondition(frames > 1, "a window needs at least two frames")
        self.frames = frames
        self.tones = tones
        let window = (0..<frames).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(frames - 1)) }
        self.window = window
        self.gain = window.reduce(0, +)
        self.coefficients = tones.map { 2 * cos(2 * Double.pi * $0 / rate) }
    }

    /// The next window's level, the chime's share of it, and its kind.
    public mutating func classify(_ samples: [Float]) -> Verdict {
        precondition(samples.count == frames, "a window is \(frames) frames, not \(samples.count)")
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        let power = sum / Double(samples.count)
        let rmsDB = power > 0 ? 10 * log10(power) : -Double.infinity
        let verdict: Verdict
        if rmsDB < Self.silenceDB {
            verdict = Verdict(rmsDB: rmsDB, share: 0, kind: .silence)
        } else {
            let weighted = (0..<frames).map { Double(samples[$0]) * window[$0] }
            let share = min(1, coefficients.reduce(0) { $0 + tonePower(weighted, $1) } / power)
            let kind: Kind =
                share >= Self.cueShare ? .cue : (previous == .sound || previous == .soundscape) ? .soundscape : .sound
            verdict = Verdict(rmsDB: rmsDB, share: share, kind: kind)
        }
        previous = verdict.kind
        return verdict
    }

    /// Power of a sine at the Goertzel frequency (A²/2 for amplitude A).
    private func tonePower(_ weighted: [Double], _ coefficient: Double) -> Double {
        var s1 = 0.0
        var s2 = 0.0
        for x in weighted {
            (s1, s2) = (x + coefficient * s1 - s2, s1)
        }
        let magnitudeSquared = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        let amplitude = 2 * max(magnitudeSquared, 0).squareRoot() / gain
        return amplitude * amplitude / 2
    }

    /// The signer-down cue's tones (Hz), from `manifest` (default: the checkout's
    /// soundscapes/manifest.json): its `cues` entry with id `signer-down`.
    public static func signerDownTones(manifest: URL? = nil) throws -> [Double] {
        struct Manifest: Decodable {
            struct Cue: Decodable {
                var id: String
                var tones: [Double]
            }
            var cues: [Cue]?
        }
        let url = manifest ?? ProductLocator.soundscapesDirectory.appendingPathComponent("manifest.json")
        let decoded: Manifest
        do {
            decoded = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
        } catch {
            throw HarnessError("cannot read the cue's tones from \(url.path): \(error)")
        }
        guard let tones = decoded.cues?.first(where: { $0.id == "signer-down" })?.tones, !tones.isEmpty,
            tones.allSatisfy({ $0 > 0 && $0 < rate / 2 })
        else {
            throw HarnessError("\(url.path) has no signer-down cue with tones under \(Int(rate / 2)) Hz in \"cues\"")
        }
        return tones
    }
}
