import Foundation
import Synchronization
import Testing
import SoundscapeCore
@testable import SoundscapeAudio

/// Counts the renderer's wake-ups (the eventfd signal in production).
final class WakeCounter: Sendable {
    private let calls = Atomic<Int>(0)
    var count: Int { calls.load(ordering: .relaxed) }
    func callAsFunction() { calls.add(1, ordering: .relaxed) }
}

/// A ring filled to the brim with one constant stereo frame.
func constantRing(left: Float, right: Float, frames: Int) -> SampleRing {
    let ring = SampleRing(minimumFrames: frames)
    ring.write(maximumFrames: .max) { destination, run in
        for frame in 0..<run {
            destination[frame * 2] = left
            destination[frame * 2 + 1] = right
        }
        return run
    }
    return ring
}

/// Small, distinct timings so the arrays stay short and the phases can be told apart.
let testSettings = RenderSettings(
    volumeRamp: .milliseconds(20), fadeIn: .milliseconds(10), promptFadeIn: .milliseconds(2),
    fadeOut: .milliseconds(5), crossfade: .milliseconds(10))

struct RenderHarness {
    let renderer: Renderer
    let wakes = WakeCounter()

    init(settings: RenderSettings = testSettings) {
        let wakes = self.wakes
        renderer = Renderer(settings: settings, wake: { wakes() })
    }

    var settings: RenderSettings { renderer.settings }

    /// Renders `frames` frames in cycles of at most `chunk`, returning the output interleaved.
    /// The planes start as NaN so every sample the renderer fails to write shows.
    func render(frames: Int, chunk: Int = 128) -> [Float] {
        var output: [Float] = []
        var remaining = frames
        while remaining > 0 {
            let cycle = min(chunk, remaining)
            output += renderer.renderInterleaved(frames: cycle)
            remaining -= cycle
        }
        return output
    }

    /// What `PipeWireOutput.play` does from silence: voice, immediate volume, run.
    func start(ring: SampleRing, gain: Float, volume: Float = 1, slot: Int = 0, fadeIn: FadeIn = .gentle) {
        renderer.applyVoice(slot: slot, ring: ring, gain: gain)
        renderer.applyVolume(position: volume, immediately: true)
        renderer.applyRunning(true, fadeIn: fadeIn)
    }

    /// Skips the fade-in: straight to the steady level.
    func startSteady(ring: SampleRing, gain: Float, volume: Float = 1) {
        start(ring: ring, gain: gain, volume: volume)
        renderer.applyFadeLevel(1)
    }
}

extension Renderer {
    /// One cycle into two fresh planes (NaN until written), returned interleaved.
    func renderInterleaved(frames: Int) -> [Float] {
        var left = [Float](repeating: .nan, count: frames)
        var right = [Float](repeating: .nan, count: frames)
        left.withUnsafeMutableBufferPointer { left in
            right.withUnsafeMutableBufferPointer { right in
                render(into: Planes(left: left.baseAddress!, right: right.baseAddress!), frames: frames)
            }
        }
        return zip(left, right).flatMap { [$0, $1] }
    }
}

func left(_ samples: [Float]) -> [Float] { stride(from: 0, to: samples.count, by: 2).map { samples[$0] } }
func right(_ samples: [Float]) -> [Float] { stride(from: 1, to: samples.count, by: 2).map { samples[$0] } }

@Suite struct RendererTests {
    @Test func settingsConvertDurationsToFramesAt48kHz() {
        #expect(testSettings.volumeRampFrames == 960)
        #expect(testSettings.fadeInFrames == 480)
        #expect(testSettings.promptFadeInFrames == 96)
        #expect(testSettings.fadeOutFrames == 240)
        #expect(testSettings.crossfadeFrames == 480)
        let defaults = RenderSettings()
        #expect(defaults.volumeRampFrames == 1920)
        #expect(defaults.fadeInFrames == 14_400)
        #expect(defaults.promptFadeInFrames == 1920)
        #expect(defaults.fadeOutFrames == 12_000)
        #expect(defaults.crossfadeFrames == 28_800)
        #expect(RenderSettings(volumeRamp: .zero).volumeRampFrames == 1)
    }

    @Test func silentBeforeAnyVoice() {
        let harness = RenderHarness()
        let output = harness.render(frames: 300)
        #expect(output.allSatisfy { $0 == 0 })
        #expect(harness.renderer.takeNotifications().isEmpty)
        #expect(harness.wakes.count == 0)
        #expect(harness.renderer.slotsInUse.isEmpty)
    }

    @Test func voiceThatIsNotRunningStaysSilentAndLeavesTheRingAlone() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 4096)
        harness.renderer.applyVoice(slot: 0, ring: ring, gain: 1)
        harness.renderer.applyVolume(position: 1, immediately: true)
        #expect(harness.renderer.slotsInUse == [0])
        #expect(harness.render(frames: 500).allSatisfy { $0 == 0 })
        #expect(ring.availableFrames == 4096)
    }

    @Test(arguments: [(Float(1), Float(0.8), FadeIn.gentle), (0.5, 0.8, .gentle), (0.7, 1, .gentle)])
    func fadeInRisesMonotonicallyToTheSteadyLevel(volume: Float, gain: Float, fade: FadeIn) {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        harness.start(ring: ring, gain: gain, volume: volume, fadeIn: fade)
        let fadeIn = harness.settings.fadeInFrames(fade)
        let output = harness.render(frames: fadeIn + 200, chunk: 100)
        let steady = Float(0.5) * (Volume.gain(forPosition: volume) * gain)
        let samples = left(output)
        #expect(samples == right(output))
        #expect(samples[0] > 0)
        #expect(samples[0] < steady / 1000)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 <= $1 })
        let reached = samples.firstIndex(of: steady)
        // The fade takes fadeInFrames frames (one more at most for float rounding of the step).
        #expect(reached.map { (fadeIn - 1)...fadeIn ~= $0 } == true, "reached at \(String(describing: reached))")
        #expect(samples[fadeIn...].allSatisfy { $0 == steady })
        #expect(samples[fadeIn / 2] < steady / 4)  // cubic in the fade position: slow start
    }

    /// A return (`FadeIn.prompt`) fades the gain itself in, not the position on the
    /// cubic curve: it is heard from its first tenth, and still rises without a step.
    @Test(arguments: [Float(1), 0.6])
    func aPromptFadeInIsLinearInGain(volume: Float) {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        harness.start(ring: ring, gain: 1, volume: volume, fadeIn: .prompt)
        let fadeIn = harness.settings.promptFadeInFrames
        let samples = left(harness.render(frames: fadeIn + 200, chunk: 50))
        let steady = Float(0.5) * Volume.gain(forPosition: volume)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(samples[0] > 0 && samples[0] <= steady / Float(fadeIn) * 1.01, "the first sample is the ramp's first step")
        #expect(abs(samples[fadeIn / 2 - 1] - steady / 2) < steady * 0.02, "half way, half the gain")
        #expect(samples[fadeIn / 10] >= steady / 10, "within 20 dB of the steady level after a tenth")
        #expect(samples[fadeIn...].allSatisfy { $0 == steady })
        let largestStep = zip(samples, samples.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(largestStep <= steady / Float(fadeIn) * 1.01, "no step larger than the ramp's")
    }

    /// A stop during a prompt fade-in falls from where it was; once the fade is
    /// full, the next stop fades out on the curve, as every stop does.
    @Test func aStopDuringAPromptFadeFallsFromWhereItWasAndAFullOneStopsOnTheCurve() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 16384)
        harness.start(ring: ring, gain: 1, fadeIn: .prompt)
        let rising = left(harness.render(frames: harness.settings.promptFadeInFrames / 2))
        harness.renderer.applyRunning(false)
        let falling = left(harness.render(frames: 64))
        #expect(falling[0] <= rising.last!)
        #expect(rising.last! - falling[0] < 0.01, "no step down: \(rising.last!) → \(falling[0])")

        harness.renderer.applyRunning(true, fadeIn: .prompt)
        _ = harness.render(frames: harness.settings.promptFadeInFrames + 100)
        harness.renderer.applyRunning(false)
        let fadeOut = harness.settings.fadeOutFrames
        let stop = left(harness.render(frames: fadeOut + 100, chunk: 64))
        #expect(stop[fadeOut / 2] < 0.5 / 4, "the stop's fade-out is on the cubic curve: \(stop[fadeOut / 2])")
        #expect(stop[fadeOut...].allSatisfy { $0 == 0 })
    }

    @Test func steadyOutputIsExactlyTheSampleTimesTheVoiceGain() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: -0.25, frames: 4096)
        harness.startSteady(ring: ring, gain: 0.8)
        let output = harness.render(frames: 1000, chunk: 333)
        #expect(left(output).allSatisfy { $0 == Float(0.5) * Float(0.8) })
        #expect(right(output).allSatisfy { $0 == Float(-0.25) * Float(0.8) })
        #expect(ring.availableFrames == 4096 - 1000)
    }

    @Test func volumeChangeRampsWithoutAClickToExactlyAnEighth() throws {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        let gain: Float = 0.8
        harness.startSteady(ring: ring, gain: gain)
        let before = left(harness.render(frames: 64)).last!
        #expect(before == Float(0.5) * gain)

        harness.renderer.applyVolume(position: 0.5)
        let ramp = harness.settings.volumeRampFrames
        let samples = left(harness.render(frames: ramp * 2, chunk: 100))
        let target = before / 8
        #expect(samples.last == target)
        let reached = try #require(samples.firstIndex(of: target))
        // Half the range takes half the full-range ramp time.
        #expect(reached <= ramp)
        #expect(abs(reached - ramp / 2) <= 1, "reached at \(reached)")
        #expect(samples[reached...].allSatisfy { $0 == target })
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 >= $1 })
        // No click: the largest step is within a small factor of an even ramp.
        let steps = zip([before] + samples, samples).map { abs($0 - $1) }
        let evenStep = (before - target) / Float(reached + 1)
        #expect(steps.max()! <= evenStep * 4)
        #expect(steps.max()! < before * 0.01)
    }

    @Test func volumeRampCanBeSkipped() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 4096)
        harness.startSteady(ring: ring, gain: 1)
        harness.renderer.applyVolume(position: 0.5, immediately: true)
        #expect(left(harness.render(frames: 10)).allSatisfy { $0 == 0.5 * 0.125 })
    }

    @Test func stopFadesToExactlyZeroAndReportsFadedOutOnce() throws {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        harness.start(ring: ring, gain: 1)
        _ = harness.render(frames: harness.settings.fadeInFrames + 100)
        #expect(harness.renderer.takeNotifications().isEmpty)
        #expect(harness.wakes.count == 0)

        harness.renderer.applyRunning(false)
        let fadeOut = harness.settings.fadeOutFrames
        let samples = left(harness.render(frames: fadeOut + 300, chunk: 64))
        #expect(samples[0] < 0.5)
        #expect(samples[0] > 0.45)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 >= $1 })
        let silentFrom = try #require(samples.firstIndex(of: 0))
        #expect((fadeOut - 1)...fadeOut ~= silentFrom, "silent from \(silentFrom)")
        #expect(samples[silentFrom...].allSatisfy { $0 == 0 })
        #expect(harness.wakes.count == 1)
        #expect(harness.renderer.takeNotifications() == .fadedOut)

        // Silence after the fade leaves the ring where the fade ended, and reports nothing more.
        let available = ring.availableFrames
        #expect(harness.render(frames: 500).allSatisfy { $0 == 0 })
        #expect(ring.availableFrames == available)
        #expect(harness.wakes.count == 1)
        #expect(harness.renderer.takeNotifications().isEmpty)
    }

    /// A start while running (a play during a fade-in under way) keeps that fade's pace.
    @Test func aStartWhileRunningKeepsThePaceOfTheFadeIn() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        harness.start(ring: ring, gain: 1, fadeIn: .prompt)
        _ = harness.render(frames: 48)
        harness.renderer.applyRunning(true, fadeIn: .gentle)
        let samples = left(harness.render(frames: 100))
        // The prompt fade (96 frames) ends 48 frames later; the gentle one would take 432 more.
        #expect(samples[47] == 0.5)
    }

    @Test func playAgainDuringTheFadeOutRisesFromWhereItWas() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 8192)
        harness.startSteady(ring: ring, gain: 1)
        harness.renderer.applyRunning(false)
        let falling = left(harness.render(frames: 100))
        harness.renderer.applyRunning(true)
        let rising = left(harness.render(frames: 600))
        #expect(rising[0] > falling.last!)
        #expect(rising[0] - falling.last! < 0.01)
        #expect(rising.last == 0.5)
        #expect(harness.renderer.takeNotifications().isEmpty)
    }

    @Test func crossfadeIsEqualPowerAndReleasesTheOutgoingSlot() {
        let harness = RenderHarness()
        // Voice A only on the left, voice B only on the right, so each is measured alone.
        let a = constantRing(left: 0.5, right: 0, frames: 8192)
        let b = constantRing(left: 0, right: 0.5, frames: 8192)
        harness.startSteady(ring: a, gain: 1)
        _ = harness.render(frames: 64)

        harness.renderer.applyVoice(slot: 1, ring: b, gain: 0.5)
        #expect(harness.renderer.slotsInUse == [0, 1])
        let length = harness.settings.crossfadeFrames
        let firstPart = harness.render(frames: length - 96, chunk: 96)
        #expect(harness.renderer.slotsInUse == [0, 1])
        #expect(!harness.renderer.takeNotifications().contains(.slotReleased))
        let wakesBefore = harness.wakes.count
        let output = firstPart + harness.render(frames: 96, chunk: 96)
        #expect(harness.renderer.takeNotifications() == .slotReleased)
        #expect(harness.wakes.count == wakesBefore + 1)
        #expect(harness.renderer.slotsInUse == [1])

        let outgoing = left(output).map { $0 / 0.5 }
        let incoming = right(output).map { $0 / (0.5 * 0.5) }
        var worst: Float = 0
        for frame in 0..<length {
            let angle = Float(frame) / Float(length) * .pi / 2
            worst = max(
                worst, abs(outgoing[frame] - cos(angle)), abs(incoming[frame] - sin(angle)),
                abs(outgoing[frame] * outgoing[frame] + incoming[frame] * incoming[frame] - 1))
        }
        #expect(worst < 1e-5)
        #expect(outgoing[0] == 1)
        #expect(incoming[0] == 0)
        #expect(abs(outgoing[length / 2] - Float(0.5).squareRoot()) < 1e-6)
        #expect(abs(incoming[length / 2] - Float(0.5).squareRoot()) < 1e-6)

        // Afterwards only B plays, at its own gain, and A's ring is no longer read.
        let aLeft = a.availableFrames
        let after = harness.render(frames: 200)
        #expect(left(after).allSatisfy { $0 == 0 })
        #expect(right(after).allSatisfy { $0 == 0.25 })
        #expect(a.availableFrames == aLeft)
    }

    @Test func switchingVoiceWhileSilentReplacesItWithoutACrossfade() {
        let harness = RenderHarness()
        let a = constantRing(left: 0.5, right: 0.5, frames: 1024)
        let b = constantRing(left: 0.25, right: 0.25, frames: 1024)
        harness.renderer.applyVoice(slot: 0, ring: a, gain: 1)
        harness.renderer.applyVoice(slot: 1, ring: b, gain: 1)
        #expect(harness.renderer.slotsInUse == [1])
        harness.renderer.applyVolume(position: 1, immediately: true)
        harness.renderer.applyRunning(true)
        harness.renderer.applyFadeLevel(1)
        #expect(left(harness.render(frames: 50)).allSatisfy { $0 == 0.25 })
        #expect(a.availableFrames == a.capacity)
    }

    @Test func underrunGivesSilenceForTheMissingPartAndIsCounted() {
        let harness = RenderHarness()
        let ring = SampleRing(minimumFrames: 256)
        ring.write(maximumFrames: 100) { destination, run in
            for index in 0..<(run * 2) { destination[index] = 0.5 }
            return run
        }
        harness.startSteady(ring: ring, gain: 1)
        let output = harness.render(frames: 160, chunk: 160)
        #expect(output[..<200].allSatisfy { $0 == 0.5 })
        #expect(output[200...].allSatisfy { $0 == 0 })
        #expect(harness.renderer.counters.underrunFrames == 60)
        #expect(harness.render(frames: 32, chunk: 32).allSatisfy { $0 == 0 })
        #expect(harness.renderer.counters.underrunFrames == 92)
    }

    @Test func refillIsRaisedBelowHalfAndWakesOnceUntilTaken() {
        let harness = RenderHarness()
        let ring = constantRing(left: 0.5, right: 0.5, frames: 256)
        harness.startSteady(ring: ring, gain: 1)
        _ = harness.render(frames: 64, chunk: 64)  // 192 left
        _ = harness.render(frames: 64, chunk: 64)  // 128 left: exactly half is not low
        #expect(harness.wakes.count == 0)
        #expect(harness.renderer.takeNotifications().isEmpty)
        _ = harness.render(frames: 64, chunk: 64)  // 64 left
        #expect(harness.wakes.count == 1)
        _ = harness.render(frames: 16, chunk: 16)
        _ = harness.render(frames: 16, chunk: 16)
        #expect(harness.wakes.count == 1)
        #expect(harness.renderer.takeNotifications() == .refill)
        #expect(harness.renderer.takeNotifications().isEmpty)

        // Topped up, it is quiet again; drained again, it wakes again.
        ring.write(maximumFrames: .max) { destination, run in
            for index in 0..<(run * 2) { destination[index] = 0.5 }
            return run
        }
        _ = harness.render(frames: 64, chunk: 64)
        #expect(harness.wakes.count == 1)
        _ = harness.render(frames: 128, chunk: 64)
        #expect(harness.wakes.count == 2)
        #expect(harness.renderer.takeNotifications() == .refill)
    }

    @Test func countersCountFramesAndCycles() {
        let harness = RenderHarness()
        #expect(harness.renderer.counters == .init(frames: 0, cycles: 0, underrunFrames: 0))
        _ = harness.render(frames: 300, chunk: 128)  // silent cycles count too: 128 + 128 + 44
        #expect(harness.renderer.counters == .init(frames: 300, cycles: 3, underrunFrames: 0))
        let ring = constantRing(left: 0.1, right: 0.1, frames: 4096)
        harness.startSteady(ring: ring, gain: 1)
        _ = harness.render(frames: 1000, chunk: 250)
        #expect(harness.renderer.counters == .init(frames: 1300, cycles: 7, underrunFrames: 0))
    }
}
