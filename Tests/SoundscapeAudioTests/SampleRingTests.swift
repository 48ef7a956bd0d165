import Testing
@testable import SoundscapeAudio

/// Writes `frames` stereo frames whose left sample is `start + i` and right sample `-(start + i)`.
@discardableResult
func writeCounting(_ ring: SampleRing, from start: Int, frames: Int) -> Int {
    var next = start
    return ring.write(maximumFrames: frames) { destination, run in
        for frame in 0..<run {
            destination[frame * 2] = Float(next)
            destination[frame * 2 + 1] = -Float(next)
            next += 1
        }
        return run
    }
}

/// Consumes up to `frames` frames and returns them interleaved, in order.
func consumeAll(_ ring: SampleRing, frames: Int) -> [Float] {
    var collected = [Float](repeating: .nan, count: frames * 2)
    let got = ring.consume(frames: frames) { source, run, offset in
        for index in 0..<(run * 2) { collected[offset * 2 + index] = source[index] }
    }
    return Array(collected.prefix(got * 2))
}

func counting(from start: Int, frames: Int) -> [Float] {
    (start..<(start + frames)).flatMap { [Float($0), -Float($0)] }
}

@Suite struct SampleRingTests {
    @Test(arguments: [(0, 16), (1, 16), (16, 16), (17, 32), (100, 128), (1000, 1024), (1024, 1024), (1025, 2048)])
    func capacityRoundsUpToAPowerOfTwo(minimum: Int, capacity: Int) {
        #expect(SampleRing(minimumFrames: minimum).capacity == capacity)
    }

    @Test func freshRingIsEmpty() {
        let ring = SampleRing(minimumFrames: 64)
        #expect(ring.availableFrames == 0)
        #expect(ring.freeFrames == 64)
        #expect(consumeAll(ring, frames: 10).isEmpty)
    }

    @Test func bookkeepingFollowsWritesAndReads() {
        let ring = SampleRing(minimumFrames: 64)
        #expect(writeCounting(ring, from: 0, frames: 40) == 40)
        #expect(ring.availableFrames == 40)
        #expect(ring.freeFrames == 24)
        #expect(consumeAll(ring, frames: 15) == counting(from: 0, frames: 15))
        #expect(ring.availableFrames == 25)
        #expect(ring.freeFrames == 39)
        // A write never exceeds the free space.
        #expect(writeCounting(ring, from: 40, frames: 1000) == 39)
        #expect(ring.availableFrames == 64)
        #expect(ring.freeFrames == 0)
        #expect(writeCounting(ring, from: 79, frames: 5) == 0)
    }

    @Test func orderIsPreservedExactlyAcrossTheWrapPoint() {
        let ring = SampleRing(minimumFrames: 32)
        var written = 0
        var read = 0
        // Uneven chunk sizes walk the positions across the wrap point many times.
        let writes = [7, 20, 13, 32, 1, 30, 25, 9]
        let reads = [5, 19, 17, 30, 3, 31, 11, 29]
        for (w, r) in zip(writes, reads) {
            written += writeCounting(ring, from: written, frames: w)
            let chunk = consumeAll(ring, frames: r)
            #expect(chunk == counting(from: read, frames: chunk.count / 2))
            read += chunk.count / 2
            #expect(ring.availableFrames == written - read)
        }
        #expect(written > 3 * ring.capacity)
    }

    @Test func consumeHandsOverAtMostTwoRunsWithTheirOutputOffsets() {
        let ring = SampleRing(minimumFrames: 16)
        writeCounting(ring, from: 0, frames: 12)
        _ = consumeAll(ring, frames: 12)
        writeCounting(ring, from: 12, frames: 10)  // positions 12…15, then 0…5
        var runs: [(run: Int, offset: Int)] = []
        let got = ring.consume(frames: 10) { _, run, offset in runs.append((run, offset)) }
        #expect(got == 10)
        #expect(runs.map(\.run) == [4, 6])
        #expect(runs.map(\.offset) == [0, 4])
    }

    @Test func writeFillsAtMostTwoContiguousRuns() {
        let ring = SampleRing(minimumFrames: 16)
        writeCounting(ring, from: 0, frames: 10)
        _ = consumeAll(ring, frames: 10)
        var runs: [Int] = []
        let wrote = ring.write(maximumFrames: 16) { _, run in
            runs.append(run)
            return run
        }
        #expect(wrote == 16)
        #expect(runs == [6, 10])
    }

    @Test func consumingMoreThanAvailableReturnsWhatIsThere() {
        let ring = SampleRing(minimumFrames: 32)
        writeCounting(ring, from: 0, frames: 9)
        let chunk = consumeAll(ring, frames: 25)
        #expect(chunk == counting(from: 0, frames: 9))
        #expect(ring.availableFrames == 0)
        #expect(ring.freeFrames == 32)
    }

    @Test func writeStopsEarlyWhenTheFillReturnsFewerFrames() {
        let ring = SampleRing(minimumFrames: 32)
        writeCounting(ring, from: 0, frames: 28)
        _ = consumeAll(ring, frames: 28)  // the next write wraps after 4 frames
        var calls = 0
        let wrote = ring.write(maximumFrames: 20) { destination, run in
            calls += 1
            #expect(run == 4)
            for index in 0..<4 { destination[index] = 7 }  // 2 frames
            return 2
        }
        #expect(wrote == 2)
        #expect(calls == 1)
        #expect(ring.availableFrames == 2)
        #expect(consumeAll(ring, frames: 10) == [7, 7, 7, 7])
    }

    @Test func fillReturningZeroWritesNothing() {
        let ring = SampleRing(minimumFrames: 16)
        #expect(ring.write(maximumFrames: 8) { _, _ in 0 } == 0)
        #expect(ring.availableFrames == 0)
    }

    @Test func resetEmptiesTheRingAndLaterWritesReadBackInOrder() {
        let ring = SampleRing(minimumFrames: 16)
        writeCounting(ring, from: 0, frames: 11)
        _ = consumeAll(ring, frames: 3)
        ring.reset()
        #expect(ring.availableFrames == 0)
        #expect(ring.freeFrames == 16)
        #expect(consumeAll(ring, frames: 16).isEmpty)
        writeCounting(ring, from: 100, frames: 16)
        #expect(consumeAll(ring, frames: 16) == counting(from: 100, frames: 16))
    }
}
