import CAllocationCounter
import Foundation
import Glibc
import Logging
import SoundscapeCore
import Testing
import TestSupport
@testable import SoundscapeAudio

/// The real-time rule "the data thread allocates nothing", observed: the test
/// executable replaces malloc and its kin (CAllocationCounter), counting each call
/// made on the thread `PlaybackStream.process` marks, while the output plays on a
/// private graph and switches soundscapes back and forth.
@Suite(.serialized) struct RealTimeAllocationTests {
    /// Runs `body` with a `PipeWireOutput` of this process connected to a private graph.
    private func withOutput(_ body: (PipeWireOutput) throws -> Void) throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let previous = getenv("PIPEWIRE_RUNTIME_DIR").map { String(cString: $0) }
            setenv("PIPEWIRE_RUNTIME_DIR", graph.directory.path, 1)
            defer {
                if let previous { setenv("PIPEWIRE_RUNTIME_DIR", previous, 1) } else { unsetenv("PIPEWIRE_RUNTIME_DIR") }
            }
            var configuration = OutputConfiguration()
            configuration.nodeName = "soundscaped-allocation-test"
            configuration.pcmCacheDirectory = graph.directory.appendingPathComponent("pcm").path
            let (events, continuation) = AsyncStream<AudioOutputEvent>.makeStream()
            _ = events
            let output = PipeWireOutput(configuration: configuration, logger: Logger(label: "test"), events: continuation)
            defer { output.shutdown() }
            output.start()
            try body(output)
        }
    }

    /// Waits for `cycles` more graph cycles of ours.
    private func run(_ output: PipeWireOutput, cycles: Int, _ what: String) throws {
        let start = output.counters.cycles
        _ = try waitUntil(timeout: .seconds(20), "\(cycles) cycles while \(what)") {
            output.counters.cycles >= start + cycles
        }
    }

    @Test func theDataThreadAllocatesNothingWhilePlayingAndSwitching() throws {
        let bytes = try bundledBytes("rain.opus")
        let a = try SoundscapeData(id: SoundscapeID("rain-a")!, gain: 0.8, contents: bytes)
        let b = try SoundscapeData(id: SoundscapeID("rain-b")!, gain: 0.6, contents: bytes)
        try withOutput { output in
            // Warm-up: every path once (fade-in, crossfade both ways, a volume ramp).
            output.play(a, volume: Volume(percent: 60)!, fadeIn: .gentle)
            try run(output, cycles: 40, "fading in")
            output.play(b, volume: Volume(percent: 60)!, fadeIn: .gentle)
            try run(output, cycles: 60, "crossfading to b")
            output.play(a, volume: Volume(percent: 60)!, fadeIn: .gentle)
            try run(output, cycles: 60, "crossfading to a")
            output.setVolume(Volume(percent: 40)!)
            try run(output, cycles: 20, "ramping the volume")

            let before = cac_real_time_allocations()
            let cyclesBefore = output.counters.cycles
            for round in 0..<4 {
                output.play(round % 2 == 0 ? b : a, volume: Volume(percent: 50 + 10 * round)!, fadeIn: .gentle)
                try run(output, cycles: 60, "switching, round \(round)")
            }
            let after = cac_real_time_allocations()
            #expect(output.counters.cycles - cyclesBefore >= 240, "the data thread ran")
            #expect(after == before, "\(after - before) allocations on the data thread while playing and switching")

            // The sanity case: an allocation made on that thread is seen.
            let box = AllocationBox()
            runBlocking(on: output.dataLoop) { box.allocate() }
            #expect(box.made)
            #expect(cac_real_time_allocations() > after, "the counter sees an allocation on the data thread")
        }
    }

    @Test func theDataThreadAllocatesNothingWithLayers() throws {
        let data = try ["rain", "ocean-waves", "wind"].map { name in
            try SoundscapeData(id: SoundscapeID(name)!, gain: 0.8, contents: try bundledBytes("\(name).opus"))
        }
        let (rain, waves, wind) = (data[0], data[1], data[2])
        let volume = Volume(percent: 60)!
        try withOutput { output in
            // Warm-up: every path once (three layers fading in, a level moving, a layer added, one taken out).
            output.play([LayerData(rain), LayerData(waves, level: 40), LayerData(wind, level: 25)], volume: volume, fadeIn: .gentle)
            try run(output, cycles: 60, "three layers fading in")
            output.play([LayerData(rain), LayerData(waves, level: 70), LayerData(wind, level: 25)], volume: volume, fadeIn: .gentle)
            try run(output, cycles: 60, "a level moving")
            output.play([LayerData(rain), LayerData(waves, level: 70)], volume: volume, fadeIn: .gentle)
            try run(output, cycles: 60, "a layer taken out")
            output.play([LayerData(rain), LayerData(waves, level: 70), LayerData(wind, level: 25)], volume: volume, fadeIn: .gentle)
            try run(output, cycles: 60, "a layer added")

            let before = cac_real_time_allocations()
            let cyclesBefore = output.counters.cycles
            for round in 0..<4 {
                let level = round % 2 == 0 ? 30 : 80
                output.play([LayerData(rain), LayerData(waves, level: level), LayerData(wind, level: 25)], volume: volume, fadeIn: .gentle)
                try run(output, cycles: 40, "a level changing, round \(round)")
                try run(output, cycles: 40, "three layers steady, round \(round)")
                output.play([LayerData(rain), LayerData(waves, level: level)], volume: volume, fadeIn: .gentle)
                try run(output, cycles: 40, "a layer taken out, round \(round)")
                output.play([LayerData(rain), LayerData(waves, level: level), LayerData(wind, level: 50)], volume: volume, fadeIn: .gentle)
                try run(output, cycles: 40, "a layer added, round \(round)")
            }
            let after = cac_real_time_allocations()
            #expect(output.counters.cycles - cyclesBefore >= 640, "the data thread ran")
            #expect(after == before, "\(after - before) allocations on the data thread with layers coming, going and moving")
        }
    }
}

/// Allocates on whichever thread calls `allocate` and keeps the result, so it is not optimised away.
private final class AllocationBox: @unchecked Sendable {
    private var kept: [Int] = []
    var made: Bool { !kept.isEmpty }
    func allocate() { kept = Array(0..<Int.random(in: 100...200)) }
}
