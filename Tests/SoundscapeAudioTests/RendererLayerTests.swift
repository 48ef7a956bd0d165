import Glibc
import SoundscapeCore
import Testing

@testable import SoundscapeAudio

/// Layers in the renderer (issue 39): each at its level, in and out on the
/// equal-power curve, a level moved at the volume's pace, and the sleep timer's dimming.
@Suite struct RendererLayerTests {
    /// Steady, at full volume: A only on the left, B only on the right. The caller keeps
    /// both rings alive, as `VoiceBank` does: the renderer holds them unretained.
    func twoLayers(levelB: Float = 0.5) -> (RenderHarness, SampleRing, SampleRing) {
        let harness = RenderHarness()
        let a = constantRing(left: 0.5, right: 0, frames: 16384)
        let b = constantRing(left: 0, right: 0.5, frames: 16384)
        harness.renderer.applyLayer(slot: 0, ring: a, gain: 0.8, level: 1)
        harness.renderer.applyLayer(slot: 3, ring: b, gain: 0.9, level: levelB)
        harness.renderer.applyVolume(position: 1, immediately: true)
        harness.renderer.applyRunning(true)
        harness.renderer.applyFadeLevel(1)
        return (harness, a, b)
    }

    @Test func layersAddEachAtItsGainAndLevelOnTheVolumeCurve() {
        let (harness, a, b) = twoLayers()
        #expect(harness.renderer.slotsInUse == [0, 3])
        let output = harness.render(frames: 500, chunk: 128)
        #expect(left(output).allSatisfy { $0 == 0.5 * 0.8 })
        #expect(right(output).allSatisfy { $0 == 0.5 * (0.9 * Volume.gain(forPosition: 0.5)) })
        #expect(a.availableFrames == 16384 - 500 && b.availableFrames == 16384 - 500, "both rings are read")
    }

    @Test func aLayerAddedWhileAudibleRisesOnTheEqualPowerCurve() {
        let harness = RenderHarness()
        let a = constantRing(left: 0.5, right: 0, frames: 16384)
        let b = constantRing(left: 0, right: 0.5, frames: 16384)
        harness.startSteady(ring: a, gain: 1)
        _ = harness.render(frames: 64)
        harness.renderer.applyLayer(slot: 1, ring: b, gain: 1, level: 1)
        let length = harness.settings.crossfadeFrames
        let output = harness.render(frames: length + 100, chunk: 96)
        #expect(left(output).allSatisfy { $0 == 0.5 }, "the layer already there is untouched")
        let rising = right(output).map { $0 / 0.5 }
        for frame in stride(from: 0, to: length, by: 7) {
            #expect(abs(rising[frame] - sin(Float(frame) / Float(length) * .pi / 2)) < 1e-5)
        }
        #expect(rising[length...].allSatisfy { $0 == 1 })
        #expect(!harness.renderer.takeNotifications().contains(.slotReleased))
    }

    @Test func aLayerTakenOutFallsOnTheCurveAndItsSlotIsReleased() {
        let (harness, a, b) = twoLayers(levelB: 1)
        _ = harness.render(frames: 64)
        harness.renderer.applyLayerOut(slot: 3)
        let length = harness.settings.crossfadeFrames
        let output = harness.render(frames: length, chunk: 96)
        #expect(harness.renderer.takeNotifications().contains(.slotReleased))
        #expect(harness.renderer.slotsInUse == [0])
        let falling = right(output).map { $0 / (0.5 * 0.9) }
        for frame in stride(from: 0, to: length, by: 7) {
            #expect(abs(falling[frame] - cos(Float(frame) / Float(length) * .pi / 2)) < 1e-5)
        }
        #expect(left(output).allSatisfy { $0 == 0.5 * 0.8 })
        let after = harness.render(frames: 100)
        #expect(right(after).allSatisfy { $0 == 0 })
        #expect(a.availableFrames == 16384 - 64 - length - 100)
        withExtendedLifetime(b) {}
    }

    @Test func aLayerTakenOutWhileSilentGoesAtOnce() {
        let harness = RenderHarness()
        let a = constantRing(left: 0.5, right: 0.5, frames: 1024)
        harness.renderer.applyLayer(slot: 2, ring: a, gain: 1, level: 1)
        harness.renderer.applyLayerOut(slot: 2)
        #expect(harness.renderer.slotsInUse.isEmpty)
    }

    @Test func aLevelMovesAtTheVolumesPaceWithoutAStep() throws {
        let (harness, a, b) = twoLayers(levelB: 1)
        _ = harness.render(frames: 64)
        harness.renderer.applyLevel(slot: 3, level: 0.5)
        let ramp = harness.settings.volumeRampFrames
        let samples = right(harness.render(frames: ramp, chunk: 128))
        let target = 0.5 * (0.9 * Volume.gain(forPosition: 0.5))
        #expect(samples.last == target)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 >= $1 }, "falls monotonically")
        let steps = zip(samples, samples.dropFirst()).map { $0 - $1 }
        #expect(try #require(steps.max()) < 0.45 * 0.01, "no step larger than 1 % of the level")
        withExtendedLifetime((a, b)) {}
    }

    @Test func theSleepTimersDimmingFadesEverythingToSilenceInTheTimeAsked() throws {
        let (harness, a, b) = twoLayers()
        let before = try #require(left(harness.render(frames: 64)).last)
        harness.renderer.applyDim(position: 0, frames: 4800)
        let output = harness.render(frames: 4900, chunk: 256)
        let levels = left(output)
        #expect(zip(levels, levels.dropFirst()).allSatisfy { $0 >= $1 })
        #expect(levels[2400] < 0.4 * 0.2, "on the volume curve: an eighth half way, not a half")
        let silentFrom = levels.firstIndex(of: 0)
        #expect(silentFrom.map { (4799...4800).contains($0) } == true, "silent from \(String(describing: silentFrom))")
        #expect(output[9600...].allSatisfy { $0 == 0 })
        harness.renderer.applyDim(position: 1, frames: harness.settings.volumeRampFrames)
        let back = left(harness.render(frames: harness.settings.volumeRampFrames + 10))
        let after = try #require(back.last)
        #expect(abs(after - before) <= before * 1e-6, "undimmed, the level is what it was: \(before) → \(after)")
        withExtendedLifetime((a, b)) {}
    }
}
