import Glibc
import SoundscapeCore
import Testing

@testable import SoundscapeImport
@testable import SoundscapeLibrary

/// Deterministic noise for synthetic recordings (a xorshift: no global random state).
struct Noise {
    var state: UInt64

    mutating func next() -> Float {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Float(state % 2_000_001) / 1_000_000 - 1
    }
}

/// A recording as the importer meets them: `head` s of digital silence, a noise bed at
/// `level` dBFS with louder bursts, and a slow fade of `fade` s at the tail.
func recording(head: Double, body: Double, fade: Double, level: Float, seed: UInt64 = 7) -> [Float] {
    var noise = Noise(state: seed)
    let rate = 48000.0
    let headFrames = Int(head * rate)
    let bodyFrames = Int(body * rate)
    let fadeFrames = Int(fade * rate)
    var samples = [Float](repeating: 0, count: 2 * headFrames)
    samples.reserveCapacity(2 * (headFrames + bodyFrames + fadeFrames))
    let amplitude = powf(10, level / 20) * 1.7
    for frame in 0..<(bodyFrames + fadeFrames) {
        let seconds = Double(frame) / rate
        // A burst of 300 ms every 2.7 s, 9 dB up.
        var gain: Float = seconds.truncatingRemainder(dividingBy: 2.7) < 0.3 ? 2.8 : 1
        if frame >= bodyFrames { gain *= Float(1 - Double(frame - bodyFrames) / Double(fadeFrames)) }
        samples.append(noise.next() * amplitude * gain)
        samples.append(noise.next() * amplitude * gain)
    }
    return samples
}

func envelope(_ samples: [Float]) -> Envelope {
    var builder = EnvelopeBuilder()
    builder.add(samples)
    return builder.finished()
}

/// Momentary loudness stand-in: the RMS of each 400 ms block in dBFS, less 0.7 (a K-weighted
/// white noise reads about that much under its RMS); the planner only gates and averages them.
func momentary(_ samples: [Float]) -> [Float] {
    let hop = GatedLoudness.hopFrames
    return stride(from: hop, through: samples.count / 2, by: hop).map { end in
        let start = max(0, end - GatedLoudness.blockFrames)
        var sum: Float = 0
        for index in (2 * start)..<(2 * end) { sum += samples[index] * samples[index] }
        let power = sum / Float(2 * (end - start))
        return power > 0 ? 10 * log10f(power) - 0.7 + 3.01 : -.infinity
    }
}

@Suite("Import: the loop's plan (trim, loop end, loudness)")
struct LoopPlannerTests {
    @Test("a silent head and a faded tail are trimmed; the loop ends before the fade")
    func trimsHeadAndFade() throws {
        let samples = recording(head: 2, body: 30, fade: 6, level: -30)
        let plan = try LoopPlanner.plan(envelope(samples), momentary: momentary(samples))
        let rate = 48000.0
        #expect(abs(Double(plan.start) / rate - 2) < 0.15, "start at \(Double(plan.start) / rate) s, the silence ends at 2 s")
        let used = Double(plan.used.upperBound) / rate
        // The fade starts at 32 s; by 33.5 s it is 12 dB down (a quarter of it gone... at 1/4 of 6 s is 1.5 s, -2.5 dB),
        // and the loop's end must stay where the tail still matches the head's level.
        #expect(used <= 34, "the loop uses the recording up to \(used) s, deep into the fade")
        #expect(Double(plan.loop) / rate > 20, "a loop of only \(Double(plan.loop) / rate) s")
        #expect(plan.crossfade == 4 * 48000)
        #expect(plan.loop % Envelope.blockFrames == 0 && plan.start % Envelope.blockFrames == 0)
    }

    @Test("the loudness is measured over what the loop uses and the gain reaches the target")
    func gainReachesTarget() throws {
        var quiet = recording(head: 0, body: 20, fade: 0, level: -45)
        // A few knocks, 35 dB over the bed: raised with it, they must be limited.
        for second in [3, 9, 14] { quiet[2 * 48000 * second] = 0.3 }
        let plan = try LoopPlanner.plan(envelope(quiet), momentary: momentary(quiet))
        #expect(abs(plan.loudness + plan.gain - SoundscapeLoudness.target) < 0.01)
        #expect(plan.gain > 15, "a quiet recording is raised, by \(plan.gain) dB")
        #expect(plan.limits, "bursts raised by \(plan.gain) dB must be limited")
        let loud = recording(head: 0, body: 20, fade: 0, level: -12)
        let loudPlan = try LoopPlanner.plan(envelope(loud), momentary: momentary(loud))
        #expect(loudPlan.gain < -5)
        #expect(!loudPlan.limits)
    }

    @Test("under 3 s of sound after trimming is refused, as is silence")
    func refusesTooShortAndSilent() {
        let short = recording(head: 1, body: 2.5, fade: 0, level: -20)
        #expect(throws: LoopPlanError.self) { try LoopPlanner.plan(envelope(short), momentary: momentary(short)) }
        do {
            _ = try LoopPlanner.plan(envelope(short), momentary: momentary(short))
        } catch {
            #expect(error.description.contains("too short to loop: 2.5 s"), "\(error)")
        }
        let silence = [Float](repeating: 0, count: 2 * 48000 * 5)
        #expect(throws: LoopPlanError.silent) { try LoopPlanner.plan(envelope(silence), momentary: momentary(silence)) }
        #expect(throws: LoopPlanError.silent) { try LoopPlanner.plan(Envelope(), momentary: []) }
    }

    @Test("the loop's end is where the tail matches the head: a recording that repeats is cut at its period")
    func findsThePeriod() throws {
        // 9 s of noise whose level follows a 3 s pattern (quiet, loud, quiet): the best end is a whole number of periods.
        var noise = Noise(state: 3)
        var samples: [Float] = []
        for frame in 0..<(48000 * 19) {
            let phase = Double(frame % (48000 * 3)) / 48000
            let gain: Float = phase < 1 ? 0.05 : (phase < 2 ? 0.4 : 0.1)
            samples.append(noise.next() * gain)
            samples.append(noise.next() * gain)
        }
        let plan = try LoopPlanner.plan(envelope(samples), momentary: momentary(samples))
        let period = 48000 * 3
        let offset = plan.loop % period
        #expect(min(offset, period - offset) <= 2 * Envelope.blockFrames, "loop \(plan.loop) frames is \(offset) off a whole period")
    }

    @Test("equal power: fade-in² + fade-out² = 1 everywhere, from 0 to 1")
    func crossfadeIsEqualPower() {
        for index in 0..<1000 {
            let (fadeIn, fadeOut) = Crossfade.weights(index, of: 1000)
            #expect(abs(fadeIn * fadeIn + fadeOut * fadeOut - 1) < 1e-5)
        }
        #expect(Crossfade.weights(0, of: 1000).fadeIn < 0.01)
        #expect(Crossfade.weights(999, of: 1000).fadeOut < 0.01)
    }

    @Test("BS.1770 gating: silence and blocks 10 LU under the mean are left out")
    func gating() throws {
        #expect(GatedLoudness.integrated([Float](repeating: -30, count: 10)).map { abs($0 + 30) < 1e-9 } == true)
        let withSilence: [Float] = [-30, -30, -.infinity, -80, -30]
        #expect(GatedLoudness.integrated(withSilence).map { abs($0 + 30) < 1e-9 } == true)
        let withQuiet: [Float] = [-20, -20, -45]
        #expect(GatedLoudness.integrated(withQuiet).map { abs($0 + 20) < 1e-9 } == true)
        #expect(GatedLoudness.integrated([Float]()) == nil)
    }
}

@Suite("Import: the peak limiter")
struct PeakLimiterTests {
    @Test("no output sample above the ceiling, and the gain never steps")
    func holdsTheCeiling() {
        let samples = recording(head: 0, body: 6, fade: 0, level: -3)
        var limiter = PeakLimiter(ceiling: 0.5)
        var output: [Float] = []
        var input: [Float] = []
        for frame in 0..<(samples.count / 2) {
            let l = samples[2 * frame] * 4
            let r = samples[2 * frame + 1] * 4
            input.append(l)
            if let out = limiter.process(l, r) { output.append(out.0) }
        }
        #expect(output.allSatisfy { abs($0) <= 0.5 })
        #expect(limiter.deepest < 0.3)
        // The gain, frame by frame, where the input is not near zero: it moves at most 1/lookahead a frame.
        // (The first look-ahead's frames have no past to ramp from: the importer primes it.)
        var worst: Float = 0
        for index in output.indices.dropFirst(2 * limiter.lookahead) where abs(input[index]) > 0.05 && abs(input[index - 1]) > 0.05 {
            worst = max(worst, abs(output[index] / input[index] - output[index - 1] / input[index - 1]))
        }
        #expect(worst < 0.02, "the gain stepped by \(worst)")
    }

    @Test("a signal under the ceiling comes out as it went in, delayed")
    func leavesQuietAlone() {
        var limiter = PeakLimiter(ceiling: 0.9, lookahead: 16)
        var noise = Noise(state: 11)
        let input = (0..<2000).map { _ in noise.next() * 0.5 }
        var output: [Float] = []
        for value in input {
            if let out = limiter.process(value, -value) { output.append(out.0) }
        }
        #expect(output.count == input.count - limiter.delay)
        #expect(zip(output, input).allSatisfy { $0 == $1 })
    }
}

@Suite("Import: ids and the user manifest")
struct ImportNamingTests {
    @Test("the default id is the file's name, lowercased, spaces as hyphens")
    func defaultID() {
        #expect(Importer.defaultID(for: "/home/me/Field Recordings/Creek At Dawn.flac") == "creek-at-dawn")
        #expect(Importer.defaultID(for: "rain.mp3") == "rain")
        #expect(Importer.defaultID(for: ".hidden") == ".hidden")
    }

    @Test("an id that is not a plain name is a usage error")
    func refusesBadIDs() {
        for bad in ["../x", "a/b", "tab\there", "new\nline", String(repeating: "x", count: 65), "", ".hidden", "-flag"] {
            guard case .failure(let refusal) = Importer.checkID(bad) else {
                Issue.record("'\(bad)' was taken")
                continue
            }
            #expect(refusal.usage)
        }
        #expect((try? Importer.checkID("creek-at-dawn").get())?.rawValue == "creek-at-dawn")
        #expect((try? Importer.checkID(String(repeating: "x", count: 64)).get()) != nil)
    }

    @Test("the manifest keeps other entries, replaces one with the same id, and refuses to overwrite one that does not parse")
    func editsTheManifest() throws {
        let first = try UserManifest.adding(id: "creek", title: "Creek", file: "creek.opus", source: "Creek.flac", credit: "me, CC0", to: nil)
        let second = try UserManifest.adding(id: "fire", title: "Fire", file: "fire.opus", source: "fire.wav", credit: nil, to: first)
        let replaced = try UserManifest.adding(id: "creek", title: "Creek 2", file: "creek.opus", source: "c2.flac", credit: nil, to: second)
        let read = Manifest.read(replaced, directory: "/s", origin: .user)
        #expect(read.problems.isEmpty)
        #expect(read.entries.map(\.id.rawValue) == ["creek", "fire"])
        #expect(read.entries.first?.title == "Creek 2" && read.entries.first?.source == "c2.flac")
        let withCredit = Manifest.read(second, directory: "/s", origin: .user).entries.first
        #expect(withCredit?.credit == "me, CC0")
        let removed = try UserManifest.removing(id: "creek", from: replaced)
        #expect(removed.file == "creek.opus")
        #expect(Manifest.read(removed.bytes, directory: "/s", origin: .user).entries.map(\.id.rawValue) == ["fire"])
        #expect(throws: UserManifest.Unreadable.self) {
            try UserManifest.adding(id: "x", title: "x", file: "x.opus", source: nil, credit: nil, to: Array("{not json".utf8))
        }
    }
}
