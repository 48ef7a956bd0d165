import Foundation
import SoundscapeCore
import Testing
import TestSupport

@testable import SoundscapeAudio

/// TestSupport's `CueClassifier`, which decides what the real-signer check
/// (scripts/check-bunker.py) and the soak hear at a sink: each verdict on
/// synthetic audio (the chime's tones, noise like a soundscape's, silence, and
/// the borderlines between them), then on the committed cue and soundscapes
/// themselves, decoded as the player decodes them.
@Suite struct CueClassifierTests {
    static let frames = 4800  // 100 ms, the window scripts/check-bunker.py and the soak use

    let tones: [Double]

    init() throws {
        tones = try CueClassifier.signerDownTones()
    }

    func classifier() -> CueClassifier { CueClassifier(frames: Self.frames, tones: tones) }

    /// One of the chime's notes as make-soundscapes makes it: a tone with its octave at 0.83 : 0.17.
    func note(_ index: Int, amplitude: Double = 0.3, frames: Int = frames, phase: Int = 0) -> [Float] {
        let (low, high) = (tones[2 * index], tones[2 * index + 1])
        return (0..<frames).map { i in
            let t = Double(i + phase) / CueClassifier.rate
            return Float(amplitude * (0.83 * sin(2 * .pi * low * t) + 0.17 * sin(2 * .pi * high * t)))
        }
    }

    /// Repeatable broadband noise at `dB` dBFS RMS (uniform, so RMS = peak / √3).
    func noise(dB: Double, frames: Int = frames, seed: UInt64 = 1) -> [Float] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        let peak = pow(10, dB / 20) * 3.0.squareRoot()
        return (0..<frames).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(peak * (Double(state >> 11) / Double(1 << 53) * 2 - 1))
        }
    }

    /// Brown noise (integrated white, leaky), normalised to `dB` dBFS RMS: most of its power low, like the soundscapes'.
    func brownNoise(dB: Double, seed: UInt64) -> [Float] {
        var level = 0.0
        let raw = noise(dB: -10, seed: seed).map { sample -> Double in
            level = 0.995 * level + Double(sample)
            return level
        }
        let rms = (raw.reduce(0) { $0 + $1 * $1 } / Double(raw.count)).squareRoot()
        return raw.map { Float($0 / rms * pow(10, dB / 20)) }
    }

    func plus(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 + $1 } }

    @Test func theTonesComeFromTheManifestAndAreTheChimesNotesWithTheirOctaves() throws {
        #expect(tones.count == 4)
        #expect(abs(tones[1] / tones[0] - 2) < 0.001 && abs(tones[3] / tones[2] - 2) < 0.001)
        #expect(tones[0] < tones[2])
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("cueless-\(getpid()).json")
        try Data(#"{"soundscapes": []}"#.utf8).write(to: elsewhere)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        #expect(throws: HarnessError.self) { try CueClassifier.signerDownTones(manifest: elsewhere) }
    }

    @Test func eachNoteOfTheChimeIsTheCue() {
        for index in 0..<2 {
            var c = classifier()
            let verdict = c.classify(note(index))
            #expect(verdict.kind == .cue)
            #expect(verdict.share > 0.6, "note \(index): share \(verdict.share)")
            #expect(abs(verdict.rmsDB - 20 * log10(0.3 * (0.83 * 0.83 + 0.17 * 0.17).squareRoot() / 2.0.squareRoot())) < 0.2)
        }
    }

    @Test func noiseIsSoundOnceThenTheSoundscape() {
        for (name, make) in [("white", { noise(dB: -25, seed: $0) }), ("brown", { brownNoise(dB: -25, seed: $0) })] {
            var c = classifier()
            let verdicts = (1...5).map { c.classify(make(UInt64($0))) }
            #expect(verdicts.map(\.kind) == [.sound, .soundscape, .soundscape, .soundscape, .soundscape], "\(name)")
            #expect(verdicts.allSatisfy { $0.share < 0.05 }, "\(name): \(verdicts.map(\.share))")
            #expect(verdicts.allSatisfy { abs($0.rmsDB + 25) < 0.5 }, "\(name): \(verdicts.map(\.rmsDB))")
        }
    }

    @Test func silenceIsBelowMinus60DBFS() {
        var c = classifier()
        let zeros = c.classify([Float](repeating: 0, count: Self.frames))
        #expect(zeros == .init(rmsDB: -.infinity, share: 0, kind: .silence))
        // A chime too quiet to hear is silence too, not the cue.
        #expect(c.classify(note(0, amplitude: 0.0008)).kind == .silence)
        #expect(c.classify(noise(dB: -60.5)).kind == .silence)
        #expect(c.classify(noise(dB: -59.5)).kind == .sound)
        #expect(c.classify(noise(dB: -60.5)).kind == .silence)
    }

    /// A window's kind at the threshold of 20 % of its power at the tones: a note
    /// under noise carrying 30 % of the power is the cue, one carrying 10 % is not.
    @Test func theCueNeedsAFifthOfTheWindowsPower() {
        let noisePower = pow(10, -25.0 / 10)
        for (share, expected) in [(0.3, CueClassifier.Kind.cue), (0.1, .sound)] {
            // A sine of amplitude A has power A²/2; the note's two partials 0.83 : 0.17.
            let tonePower = share / (1 - share) * noisePower
            let amplitude = (2 * tonePower / (0.83 * 0.83 + 0.17 * 0.17)).squareRoot()
            var c = classifier()
            let verdict = c.classify(plus(note(1, amplitude: amplitude), noise(dB: -25, seed: 7)))
            #expect(verdict.kind == expected, "share \(share): \(verdict)")
            #expect(abs(verdict.share - share) < 0.05, "share \(share): measured \(verdict.share)")
        }
    }

    /// A note whose attack fills only the window's last 8 ms: the Hann window hides it,
    /// so the window is `sound` (undecided), and the next, full of the note, the cue.
    @Test func aNoteStartingAtTheWindowsEdgeDecidesNothingUntilTheNextWindow() {
        let edge = 384
        let onset = [Float](repeating: 0, count: Self.frames - edge) + note(0, frames: edge)
        var c = classifier()
        #expect(c.classify([Float](repeating: 0, count: Self.frames)).kind == .silence)
        let first = c.classify(onset)
        #expect(first.kind == .sound, "\(first)")
        #expect(c.classify(note(0, phase: edge)).kind == .cue)
    }

    /// After the cue, noise starts over as `sound` (a cue window is not a soundscape one);
    /// a crossfade out of the soundscape stays `soundscape` until it is below -60 dBFS.
    @Test func kindsFollowTheWindowBefore() {
        var c = classifier()
        #expect(c.classify(note(1)).kind == .cue)
        #expect(c.classify(noise(dB: -30, seed: 2)).kind == .sound)
        #expect(c.classify(noise(dB: -30, seed: 3)).kind == .soundscape)
        let fading = [-36.0, -45, -54, -59, -61, -70].map { c.classify(noise(dB: $0, seed: UInt64(-$0))).kind }
        #expect(fading == [.soundscape, .soundscape, .soundscape, .soundscape, .silence, .silence])
        #expect(c.previous == .silence)
    }

    // MARK: The committed files

    /// `seconds` of a bundled file decoded as the player decodes it, mixed to mono as
    /// pw-record --channels 1 records a stereo sink's monitor.
    func decoded(_ name: String, seconds: Double) throws -> [Float] {
        let path = try bundledSoundscapes().appendingPathComponent(name).path
        let data = try SoundscapeData(id: .signerDownCue, gain: 1, path: path)
        let frames = Int(seconds * CueClassifier.rate)
        var stereo = [Float](repeating: 0, count: 2 * frames)
        try stereo.withUnsafeMutableBufferPointer { try OpusLoopDecoder(data: data).read(into: $0.baseAddress!, frames: frames) }
        return (0..<frames).map { (stereo[2 * $0] + stereo[2 * $0 + 1]) / 2 }
    }

    func kinds(_ samples: [Float], offset: Int) -> [CueClassifier.Kind] {
        var c = classifier()
        return stride(from: offset, through: samples.count - Self.frames, by: Self.frames).map {
            c.classify(Array(samples[$0..<($0 + Self.frames)])).kind
        }
    }

    /// The cue at ten alignments of the windows: every chime heard as the cue, and never
    /// a window taken for the soundscape (`sound` is followed by the cue, never by more sound).
    @Test func theCommittedCueIsTheCueAtEveryAlignment() throws {
        let cue = try decoded("cues/signer-down.opus", seconds: 10)
        for offset in stride(from: 0, to: Self.frames, by: Self.frames / 10) {
            let kinds = kinds(cue, offset: offset)
            #expect(!kinds.contains(.soundscape), "offset \(offset): \(kinds.map(\.rawValue))")
            // Two chimes in 10 s, each 0.9 s: several cue windows in each half.
            let half = kinds.count / 2
            #expect(kinds[..<half].filter { $0 == .cue }.count >= 4, "offset \(offset): \(kinds.map(\.rawValue))")
            #expect(kinds[half...].filter { $0 == .cue }.count >= 4, "offset \(offset): \(kinds.map(\.rawValue))")
            #expect(kinds.first == .silence)
        }
    }

    @Test(arguments: ["ocean-waves.opus", "rain.opus", "brown-noise.opus", "wind.opus"])
    func theCommittedSoundscapesAreNeverTheCue(name: String) throws {
        let kinds = kinds(try decoded(name, seconds: 8), offset: 0)
        #expect(!kinds.contains(.cue), "\(kinds.map(\.rawValue))")
        #expect(kinds.dropFirst().allSatisfy { $0 == .soundscape }, "\(kinds.map(\.rawValue))")
    }
}
