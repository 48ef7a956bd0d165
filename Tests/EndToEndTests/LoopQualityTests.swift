import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the loop sounds like at the sample level: the real daemon on a private
/// graph, its sink's monitor recorded as float32 and compared with an
/// independent decode of the same Opus file (`opusdec`, not the daemon's code).
///
/// At volume 100 a user soundscape (no manifest, so gain 1) is played at unity
/// gain: the cubic curve maps position 1 to gain 1, and the graph (48 kHz F32
/// stream → null sink → monitor → pw-record f32) neither resamples nor scales.
/// So the recording must be the decoded loop itself, sample for sample.
@Suite("Loop quality: sample-exact seams, click-free ramps and switches", .serialized, .timeLimit(.minutes(1)))
struct LoopQualityTests {
    // MARK: The seam

    @Test("the loop seam is sample-exact: a recording across the seam matches a straight decode of two concatenated loops")
    func seamIsSampleExact() throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            // 110 437 frames (2.3 s): not a whole number of 20 ms Opus frames (960) nor of
            // any graph quantum, so the encoder's end trimming and the wrap both matter.
            let loopFrames = 110_437
            let opus = try NoiseLoops.make(id: "seam", frames: loopFrames, in: daemon.userSoundscapes)
            let reference = try ReferenceDecoder.decode(opus, into: graph.directory)
            try #require(
                reference.sampleRate == 48000 && reference.channels == 2,
                "opusdec gave \(reference.sampleRate) Hz, \(reference.channels) channels")
            try #require(
                reference.frameCount == loopFrames,
                "opusdec decoded \(reference.frameCount) frames, the encoded loop has \(loopFrames)")

            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "seam")
            // Compared from 0.5 s after the first sound on: the fade-in (300 ms) is over by then, and
            // the monitor's first buffer after pw-record links can be empty. 6.2 s leave more than
            // two loops after that, so at least two seams fall inside the compared span wherever
            // the loop happens to be.
            let clip = try graph.record(sink: "speaker", seconds: 6.2)
            let firstSound = (clip.samples.firstIndex { $0 != 0 } ?? 0) / clip.channels
            let start = firstSound + clip.frameIndex(at: 0.5)
            try #require(
                clip.channels == 2 && clip.frameCount - start > 2 * loopFrames + LoopMatch.windowFrames,
                "recorded only \(clip.duration) s, first sound at frame \(firstSound)")

            let offset = try #require(
                LoopMatch.align(clip, startingAt: start, with: reference),
                "no offset of the reference loop matches the recording within \(LoopMatch.gate) on a \(LoopMatch.windowFrames)-frame window at frame \(start): the recording is not the loop played at unity gain (recording \(clip.slice(from: Double(start) / 48000).rmsDB()) dBFS RMS, reference \(reference.rmsDB()) dBFS RMS)"
            )

            let seams = LoopMatch.seams(in: clip, from: start, offset: offset, loopFrames: loopFrames)
            #expect(seams.count >= 2, "only \(seams.count) seam(s) inside the compared span")

            // Measured: bit-exact (max difference 0). The tolerance admits the rounding of an extra
            // float multiply or conversion somewhere in the chain (an ulp near 0.5 is 6e-8), but not
            // 16-bit quantisation (steps of 3e-5) or any slip: one sample dropped or repeated moves the
            // noise by about 0.2 on average (checked on this very recording below).
            let tolerance: Float = 1e-6
            let result = LoopMatch.compare(clip, from: start, with: reference, offset: offset, tolerance: tolerance)
            #expect(
                result.maxDifference <= tolerance,
                """
                recording ≠ reference: max |difference| \(result.maxDifference) (tolerance \(tolerance)) \
                \(result.describe(in: clip, loopFrames: loopFrames, offset: offset, start: start)); \
                seams at \(seams.map { String(format: "%.4f s", Double($0) / 48000) })
                """)

            // The comparison's power, on this recording: model a daemon that dropped (or repeated)
            // one sample at the first seam, and the same comparison must fail it by far.
            let seam = try #require(seams.first)
            for slip in [1, -1] {
                let slipped = LoopMatch.compare(
                    clip, from: start, with: reference, offset: offset,
                    slip: (seam, slip), tolerance: tolerance)
                #expect(
                    slipped.maxDifference > 1000 * tolerance,
                    "a \(slip > 0 ? "dropped" : "repeated") sample at the seam would only differ by \(slipped.maxDifference)")
            }
        }
    }

    // MARK: No clicks

    @Test("volume ramps have no clicks: no sample-to-sample step above the source's own largest step")
    func volumeRampsAreClickFree() throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let opus = try ToneLoops.make(id: "tone440", frequency: 440, in: daemon.userSoundscapes)
            let source = try ReferenceDecoder.decode(opus, into: graph.directory)
            let sourceStep = source.loopMaxStep
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "tone440")

            let recording = try graph.startRecording(sink: "speaker")
            Thread.sleep(forTimeInterval: 0.4)  // record the end of the fade-in (300 ms) and some steady tone
            // Quick changes: down to -42 dB, back up, down to -78 dB, back up. The renderer takes a new
            // target once per graph cycle (2048 frames, 43 ms, here), so two requests a few ms apart
            // can fall into one cycle and the first is never heard; 60 ms apart, every one is.
            for volume in ["20", "100", "5", "100"] {
                try daemon.must("volume", volume)
                Thread.sleep(forTimeInterval: 0.06)
            }
            Thread.sleep(forTimeInterval: 0.25)  // the last ramp (40 ms) and some steady tone
            let clip = try recording.stop().fromFirstSound()

            // The changes are in the recording: after the fade-in reached full level, it dipped at
            // least twice by more than 20 dB and came back to full level.
            let full = source.rmsDB()
            let levels = clip.windowedRMS(windowMs: 5).map(AudioLevel.dBFS)
            let steady = try #require(levels.firstIndex { $0 > full - 1 }, "the tone never reached full level \(full) dBFS")
            var dips = 0
            var inDip = false
            for level in levels[steady...] {
                if !inDip && level < full - 20 { dips += 1; inDip = true }
                if inDip && level > full - 6 { inDip = false }
            }
            let lowest = levels[steady...].min() ?? 0
            #expect(dips >= 2, "\(dips) volume dip(s) recorded, expected 2; lowest 5 ms level \(lowest) dBFS, full \(full) dBFS")
            let end = clip.rmsDB(from: clip.duration - 0.1)
            #expect(abs(end - full) < 0.5, "the level did not return to 100 %: \(end) dBFS, expected \(full)")

            // At gain g(n) the step is g(n)·Δs + Δg·s ≤ Δs_max + Δg_max·peak: the source's own largest
            // step plus what the gain change adds. The margin allows any gain that moves at most 1/480
            // per sample (0 → 1 in 10 ms; the daemon's 40 ms slew on the cubic curve moves it at most
            // 3/1920 = 1/640). A hard change 100 → 20 % moves a 0.5 sine by up to 0.5 in one sample.
            let bound = sourceStep + source.peak / 480
            let worst = try #require(clip.maxStepLocation)
            #expect(
                worst.value <= bound,
                """
                a volume change clicked: step \(worst.value) at \(worst.time) s (channel \(worst.channel)) \
                > bound \(bound) (the tone's own largest step \(sourceStep))
                """)
        }
    }

    @Test("a soundscape switch has no click and no gap: no step above the equal-power bound sqrt(d1² + d2²)")
    func switchIsClickFree() throws {
        try whilePlayingTwoTones(requests: ["high"], recordFor: 1.2) { daemon, clip, _ in
            let before = try #require(clip.estimatedFrequency(from: 0.02, to: 0.2))
            let after = try #require(clip.estimatedFrequency(from: clip.duration - 0.3, to: clip.duration - 0.02))
            #expect(abs(before - 440) < 5 && abs(after - 660) < 5, "pitch \(before) Hz → \(after) Hz")
        }
    }

    @Test("switches requested during a crossfade (high, low, high) have no click and no gap either")
    func switchDuringCrossfadeIsClickFree() throws {
        // high → low → high, the last two while the first crossfade (600 ms) still runs: low is
        // queued behind it and then overtaken by high, which is already fading in. Crossfading
        // high into a fresh copy of itself (as an earlier build did) mixes one tone at two
        // phases, which may step up to sqrt(2)·d2 (beyond this bound) and restarts the loop.
        try whilePlayingTwoTones(requests: ["high", "low", "high"], recordFor: 1.8) { daemon, clip, events in
            let before = try #require(clip.estimatedFrequency(from: 0.02, to: 0.2))
            let after = try #require(clip.estimatedFrequency(from: clip.duration - 0.3, to: clip.duration - 0.02))
            #expect(
                abs(before - 440) < 5 && abs(after - 660) < 5,
                "pitch \(before) Hz → \(after) Hz, expected 440 Hz before and 660 Hz after (the last request)")
            #expect(try daemon.status()["soundscape"] as? String == "high")
        }
    }

    /// Plays a 440 Hz tone ("low") at 100 %, records while `requests` are sent one after
    /// another, then checks the recording for clicks and gaps and hands it to `check`.
    private func whilePlayingTwoTones(
        requests: [String], recordFor seconds: Double,
        check: (Soundscaped, AudioClip, EventFollower) throws -> Void
    ) throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let low = try ReferenceDecoder.decode(
                ToneLoops.make(id: "low", frequency: 440, in: daemon.userSoundscapes), into: graph.directory)
            let high = try ReferenceDecoder.decode(
                ToneLoops.make(id: "high", frequency: 660, in: daemon.userSoundscapes), into: graph.directory)
            try daemon.start()
            try daemon.must("volume", "100")
            try daemon.must("play", "low")
            let events = try daemon.followEvents()

            let recording = try graph.startRecording(sink: "speaker")
            Thread.sleep(forTimeInterval: 0.3)  // some of the first soundscape
            for request in requests { try daemon.must("play", request) }
            for request in requests {
                #expect(try events.next(reason: "soundscapeChanged")["soundscape"] as? String == request)
            }
            Thread.sleep(forTimeInterval: seconds)  // the crossfade and some steady tone after it
            let clip = try recording.stop().fromFirstSound()
            events.stop()
            try check(daemon, clip, events)
            try expectSmoothCrossfade(clip, from: low, to: high)
        }
    }

    /// The click and gap checks for a recording that crossfades between two tones at 100 %.
    private func expectSmoothCrossfade(_ clip: AudioClip, from first: AudioClip, to second: AudioClip) throws {
        // An equal-power crossfade y = a·s1 + b·s2 with a² + b² = 1 steps by
        //   Δy = a·Δs1 + b·Δs2 + Δa·s1 + Δb·s2.
        // By Cauchy–Schwarz the first two terms are at most sqrt(a² + b²)·sqrt(d1² + d2²) = sqrt(d1² + d2²),
        // where d1, d2 are the sources' own largest steps: when both tones happen to move steeply
        // together, the mix legitimately steps further than either source alone (here about 1.8× the
        // 440 Hz tone's step). The gain terms add at most |(Δa, Δb)|·sqrt(p1² + p2²) ≤ Δθ·sqrt(p1² + p2²);
        // the margin allows a quarter turn in as little as 10 ms (Δθ = (π/2)/480; the daemon takes
        // 600 ms). A hard cut jumps by |s1 − s2| (up to 1.0 here) and a gap by up to a full 0.5
        // amplitude: an order of magnitude above the bound.
        let d1 = first.loopMaxStep
        let d2 = second.loopMaxStep
        let margin = Float.pi / 2 / 480 * (first.peak * first.peak + second.peak * second.peak).squareRoot()
        let bound = (d1 * d1 + d2 * d2).squareRoot() + margin
        let worst = try #require(clip.maxStepLocation)
        #expect(
            worst.value <= bound,
            """
            the switch clicked: step \(worst.value) at \(worst.time) s (channel \(worst.channel)) > bound \(bound) \
            (sources' own largest steps \(d1), \(d2))
            """)

        // No gap: two tones (and any mix of them) cross zero with a slope of about 0.03 per sample,
        // so they stay below -60 dBFS for a sample or two at most. Anything from a dropped quantum
        // to a stop-and-start between the soundscapes is a run of hundreds of quiet samples.
        // Judged from the moment the first tone is at full level: the fade-in's start is rightly quiet.
        let full = first.rmsDB()
        let windows = clip.windowedRMS(windowMs: 5)
        let steady = try #require(
            windows.firstIndex { AudioLevel.dBFS($0) > full - 1 },
            "the first tone never reached full level \(full) dBFS")
        let from = Double(steady * clip.windowFrames(ms: 5)) / Double(clip.sampleRate)
        var quiet = clip.slice(from: from).longestQuietRun(below: AudioLevel.linear(dBFS: -60))
        quiet.time += from
        #expect(quiet.frames < 48, "a gap: \(quiet.frames) quiet frames from \(quiet.time) s")
    }
}

// MARK: - Fixtures

/// A loop that is nothing like periodic: independent white noise on each
/// channel mixed with a rising (left) and a falling (right) sweep, so any
/// misalignment, slip or channel swap shows as a large difference.
private enum NoiseLoops {
    static func make(id: String, frames: Int, in directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wav = directory.appendingPathComponent("\(id).wav")
        let opus = directory.appendingPathComponent("\(id).opus")
        try ChildProcess.run([
            "sox", "-R", "-n", "-b", "16", "-r", "48000", "-c", "2", wav.path,
            "synth", "\(frames)s", "whitenoise", "whitenoise",
            "synth", "\(frames)s", "sine", "mix", "100-9000", "sine", "mix", "7000-200", "vol", "0.4",
        ]).requireSuccess()
        try ChildProcess.run(["opusenc", "--quiet", "--bitrate", "128", wav.path, opus.path]).requireSuccess()
        try FileManager.default.removeItem(at: wav)
        return opus
    }
}

/// The reference decode: opus-tools' `opusdec`, which handles pre-skip and end
/// trimming itself and writes 48 kHz float WAV — no code of the daemon involved.
enum ReferenceDecoder {
    static func decode(_ opus: URL, into directory: URL) throws -> AudioClip {
        let wav = directory.appendingPathComponent("reference-\(opus.deletingPathExtension().lastPathComponent).wav")
        try ChildProcess.run(["opusdec", "--quiet", "--float", opus.path, wav.path]).requireSuccess()
        return try WAVFile.read(wav)
    }
}

/// Finding a loop inside a recording and comparing sample by sample.
private enum LoopMatch {
    static let windowFrames = 2048
    /// How close every sample of the window must be for an offset to count as a match.
    static let gate: Float = 0.05

    /// The loop position (frame of `reference`) heard at recording frame `start`: tries every
    /// offset, rejecting one at its first sample off by more than `gate` (the noise makes a
    /// wrong offset fail within a few samples), and keeps the closest of those that pass.
    static func align(_ clip: AudioClip, startingAt start: Int, with reference: AudioClip) -> Int? {
        let loop = reference.frameCount
        var best: (offset: Int, difference: Float)?
        clip.samples.withUnsafeBufferPointer { recorded in
            reference.samples.withUnsafeBufferPointer { ref in
                for offset in 0..<loop {
                    var worst: Float = 0
                    var frame = 0
                    while frame < windowFrames {
                        let r = (start + frame) * 2
                        let p = ((offset + frame) % loop) * 2
                        worst = max(worst, abs(recorded[r] - ref[p]), abs(recorded[r + 1] - ref[p + 1]))
                        if worst > gate { break }
                        frame += 1
                    }
                    if frame == windowFrames, worst < best?.difference ?? .infinity { best = (offset, worst) }
                }
            }
        }
        return best?.offset
    }

    /// Recording frames (after `start`) where the loop wraps: the frame that plays loop frame 0.
    static func seams(in clip: AudioClip, from start: Int, offset: Int, loopFrames: Int) -> [Int] {
        var frame = start + (loopFrames - offset) % loopFrames
        if frame == start { frame += loopFrames }
        var result: [Int] = []
        while frame < clip.frameCount {
            result.append(frame)
            frame += loopFrames
        }
        return result
    }

    struct Result {
        var maxDifference: Float = 0
        var worstFrame = 0
        var worstChannel = 0
        var mismatches = 0
        var firstMismatch: Int?
        var tolerance: Float

        func describe(in clip: AudioClip, loopFrames: Int, offset: Int, start: Int) -> String {
            let seconds = { (frame: Int) in String(format: "%.4f s", Double(frame) / Double(clip.sampleRate)) }
            let position = (offset + worstFrame - start) % loopFrames
            let toSeam = min(position, loopFrames - position)
            return "at \(seconds(worstFrame)) (channel \(worstChannel), loop frame \(position), \(toSeam) frames from the seam); "
                + "\(mismatches) samples over tolerance, the first at \(firstMismatch.map(seconds) ?? "-")"
        }
    }

    /// Compares every recorded frame from `start` on with the reference loop played endlessly
    /// from `offset`. `slip` models a faulty player: from recording frame `at` on, the loop
    /// position is off by `by` frames (+1: a sample dropped there, -1: one repeated).
    static func compare(
        _ clip: AudioClip, from start: Int, with reference: AudioClip, offset: Int,
        slip: (at: Int, by: Int)? = nil, tolerance: Float
    ) -> Result {
        let loop = reference.frameCount
        var result = Result(tolerance: tolerance)
        clip.samples.withUnsafeBufferPointer { recorded in
            reference.samples.withUnsafeBufferPointer { ref in
                for frame in start..<clip.frameCount {
                    var position = offset + frame - start
                    if let slip, frame >= slip.at { position += slip.by }
                    position = ((position % loop) + loop) % loop
                    for channel in 0..<2 {
                        let difference = abs(recorded[frame * 2 + channel] - ref[position * 2 + channel])
                        if difference > tolerance {
                            result.mismatches += 1
                            if result.firstMismatch == nil { result.firstMismatch = frame }
                        }
                        if difference > result.maxDifference {
                            result.maxDifference = difference
                            result.worstFrame = frame
                            result.worstChannel = channel
                        }
                    }
                }
            }
        }
        return result
    }
}

extension AudioClip {
    /// Largest step of the loop played endlessly: the steps inside it and the
    /// one across its own seam (last frame → first frame).
    var loopMaxStep: Float {
        guard frameCount >= 2 else { return 0 }
        var largest = maxStep
        for c in 0..<channels {
            largest = max(largest, abs(samples[c] - samples[(frameCount - 1) * channels + c]))
        }
        return largest
    }

    /// The longest run of frames whose every channel stays below `threshold`, and where it starts (s).
    fileprivate func longestQuietRun(below threshold: Float) -> (frames: Int, time: Double) {
        var best = (frames: 0, time: 0.0)
        var runStart = 0
        var run = 0
        for f in 0..<frameCount {
            var quiet = true
            for c in 0..<channels where abs(samples[f * channels + c]) >= threshold {
                quiet = false
                break
            }
            if quiet {
                if run == 0 { runStart = f }
                run += 1
                if run > best.frames { best = (run, Double(runStart) / Double(sampleRate)) }
            } else {
                run = 0
            }
        }
        return best
    }
}
