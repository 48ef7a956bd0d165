import Foundation
import Logging
import Testing
import SoundscapeCore
@testable import SoundscapeAudio

/// The PCM cache must be invisible to the ear: every way of reading a loop
/// (decoder only, cache only, handing over mid-loop, falling back mid-loop)
/// gives the same samples across the seam as a plain decode.
@Suite struct PCMCacheTests {
    private let logger = Logger(label: "test")

    private func temporaryCache() throws -> PCMCache {
        let path = NSTemporaryDirectory() + "soundscaped-pcm-\(UUID().uuidString)"
        return PCMCache(directory: path, buildPolicy: nil, logger: logger)
    }

    private func rain() throws -> SoundscapeData {
        try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("rain.opus"))
    }

    /// Frames `start ..< start + count` of a plain decode from the loop's start,
    /// through the seam. (Not a decoder seeked to `start`: after a seek Opus
    /// pre-rolls and converges, close to but not bit-identical with a straight decode.)
    private func reference(_ data: SoundscapeData, from start: Int64, count: Int) throws -> [Float] {
        let decoder = try OpusLoopDecoder(data: data)
        var samples = [Float](repeating: .nan, count: (Int(start) + count) * 2)
        try samples.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: Int(start) + count) }
        return Array(samples[(Int(start) * 2)...])
    }

    /// Reads `count` frames from `source` in `chunk`-frame pieces, running `between` after each piece.
    private func read(_ source: LoopSource, count: Int, chunk: Int = 4096, between: () throws -> Void = {}) throws -> [Float] {
        var samples = [Float](repeating: .nan, count: count * 2)
        var done = 0
        while done < count {
            let frames = min(chunk, count - done)
            try samples.withUnsafeMutableBufferPointer { try source.read(into: $0.baseAddress! + done * 2, frames: frames) }
            done += frames
            try between()
        }
        return samples
    }

    @Test func cachedLoopIsSampleIdenticalToDecodingAcrossTheSeam() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(cache.write(data, to: cache.path(for: data)) == .success)
        let size = try FileManager.default.attributesOfItem(atPath: cache.path(for: data))[.size] as? Int
        #expect(size == PCMCache.headerBytes + Int(data.frames) * PCMCache.bytesPerFrame)

        let source = try LoopSource(data: data, cache: cache, logger: logger)
        #expect(source.isCached)
        // Start just before the end so the read crosses the seam twice.
        let start = data.frames - 10_000
        let skip = try read(source, count: Int(start))
        #expect(skip.count == Int(start) * 2)
        let across = try read(source, count: Int(data.frames) + 20_000, chunk: 3_001)
        #expect(across == (try reference(data, from: start, count: Int(data.frames) + 20_000)))
    }

    @Test func readingWithoutWaitingGivesTheSameSamplesAcrossTheSeam() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(cache.write(data, to: cache.path(for: data)) == .success)
        let start = data.frames - 10_000
        let reader = try #require(cache.reader(for: data, position: start))
        let count = Int(data.frames) + 20_000
        var samples = [Float](repeating: .nan, count: count * 2)
        var done = 0
        var attempts = 0
        // Pages not yet in the page cache are fetched and the read retried, as the data thread does.
        while done < count, attempts < 10_000 {
            attempts += 1
            let want = min(3_001, count - done)
            let (got, shortfall) = samples.withUnsafeMutableBufferPointer {
                reader.readWithoutWaiting(into: $0.baseAddress! + done * 2, frames: want)
            }
            done += got
            switch shortfall {
            case nil: #expect(got == want)
            case .wouldBlock: reader.prefetch(frames: 65_536)
            case .unsupported: Issue.record("this file system refuses RWF_NOWAIT reads"); return
            case .failed: Issue.record("a non-blocking read failed at frame \(done)"); return
            }
        }
        #expect(done == count, "read \(done) of \(count) frames in \(attempts) attempts")
        #expect(samples == (try reference(data, from: start, count: count)))
    }

    @Test func readsThroughTheCacheLeaveTheAccessTimeAlone() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let path = cache.path(for: data)
        #expect(cache.write(data, to: path) == .success)
        let reader = try #require(cache.reader(for: data))
        // An access time older than the modification time: `relatime` updates it on the next read.
        func ageAccessTime() { #expect(utimes(path, [timeval(tv_sec: 1_000_000, tv_usec: 0), timeval(tv_sec: 2_000_000, tv_usec: 0)]) == 0) }
        func accessTime() -> Int { var info = stat(); _ = stat(path, &info); return info.st_atim.tv_sec }
        var samples = [Float](repeating: 0, count: 4096 * 2)

        // The control: a plain descriptor's read updates it here, else this test could not tell.
        ageAccessTime()
        let plain = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(plain) }
        _ = samples.withUnsafeMutableBytes { pread(plain, $0.baseAddress, $0.count, 0) }
        try #require(accessTime() != 1_000_000, "this file system updates access times on read")

        // The reader's reads, the data thread's included, do not: no inode to write back from there.
        ageAccessTime()
        try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: 4096) }
        _ = samples.withUnsafeMutableBufferPointer { reader.readWithoutWaiting(into: $0.baseAddress!, frames: 4096) }
        #expect(accessTime() == 1_000_000)
    }

    @Test func aLentReaderComesBackAtTheFrameItReached() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }

        let decoding = try LoopSource(data: data, cache: cache, logger: logger)
        #expect(decoding.lendReader() == nil, "a voice still decoding has no reader to lend")
        _ = try #require(decoding.build).wait(timeout: .seconds(30))

        let source = try LoopSource(data: data, cache: cache, logger: logger)
        let first = try read(source, count: 5_000)
        let reader = try #require(source.lendReader())
        #expect(source.isLent && source.isCached)
        #expect(source.lendReader() == nil, "a reader is lent once")
        var middle = [Float](repeating: .nan, count: 7_000 * 2)
        while reader.position < 12_000 {
            let done = Int(reader.position) - 5_000
            let (_, shortfall) = middle.withUnsafeMutableBufferPointer {
                reader.readWithoutWaiting(into: $0.baseAddress! + done * 2, frames: 12_000 - Int(reader.position))
            }
            if shortfall == .wouldBlock { reader.prefetch(frames: 7_000) }
            try #require(shortfall == nil || shortfall == .wouldBlock)
        }
        source.takeBack(reader)
        #expect(!source.isLent)
        let last = try read(source, count: 3_000)
        #expect(first + middle + last == (try reference(data, from: 0, count: 15_000)))
    }

    @Test func handoverFromDecoderToCacheMidLoopIsSampleExact() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let source = try LoopSource(data: data, cache: cache, logger: logger)
        #expect(!source.isCached, "nothing is cached yet: the decoder plays while the cache is built")
        let build = try #require(source.build)
        let half = Int(data.frames / 2) + 123
        let first = try read(source, count: half, chunk: 7_777)
        #expect(build.wait(timeout: .seconds(30)), "the background build finished")
        let second = try read(source, count: Int(data.frames), chunk: 7_777)
        #expect(source.isCached, "the source switched to the cache")
        #expect(first + second == (try reference(data, from: 0, count: half + Int(data.frames))))
    }

    @Test func damagedCacheFileIsRemovedAndDecodingUsed() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(cache.write(data, to: cache.path(for: data)) == .success)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cache.path(for: data)))
        try handle.truncate(atOffset: UInt64(PCMCache.headerBytes + 800))
        try handle.close()

        #expect(cache.reader(for: data) == nil)
        #expect(!FileManager.default.fileExists(atPath: cache.path(for: data)))
    }

    @Test func cacheFailingMidPlayFallsBackToDecodingAtTheSameFrame() throws {
        let data = try rain()
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(cache.write(data, to: cache.path(for: data)) == .success)
        let source = try LoopSource(data: data, cache: cache, logger: logger)
        #expect(source.isCached)
        var truncated = false
        let count = 200_000
        let samples = try read(source, count: count, chunk: 10_000) {
            guard !truncated else { return }
            truncated = true
            // Cut the file under the reader: its next read comes up short.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cache.path(for: data)))
            try handle.truncate(atOffset: UInt64(PCMCache.headerBytes + 12_000 * PCMCache.bytesPerFrame))
            try handle.close()
        }
        #expect(!source.isCached)
        let expected = try reference(data, from: 0, count: count)
        // Bit-identical up to the failure; after it the decoder resumes from a
        // seek, which converges to within rounding of a straight decode (a
        // bare 80 ms pre-roll would leave differences near 1e-2: audible).
        #expect(samples[..<24_000] == expected[..<24_000])
        let worst = zip(samples, expected).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-6, "largest difference after the fallback: \(worst)")
    }

    @Test func anEditedFileGetsItsOwnCacheAndTheStaleOneIsPruned() throws {
        let original = try rain()
        // A different but valid file under the same id: another bundled loop.
        let edited = try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("wind.opus"))
        #expect(original.fingerprint != edited.fingerprint)
        let cache = try temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        #expect(cache.write(original, to: cache.path(for: original)) == .success)
        #expect(cache.reader(for: edited) == nil, "a cache made from other bytes is never used")

        let source = try LoopSource(data: edited, cache: cache, logger: logger)
        #expect(try #require(source.build).wait(timeout: .seconds(30)))
        #expect(!FileManager.default.fileExists(atPath: cache.path(for: original)), "the stale decode is removed")
        #expect(FileManager.default.fileExists(atPath: cache.path(for: edited)))
    }

    // MARK: The disk budget

    @Test func aLoopThatWouldNotFitTheBudgetIsNeverWrittenAndPlaysByDecoding() throws {
        let data = try rain()
        let size = PCMCache.fileBytes(for: data)
        let path = NSTemporaryDirectory() + "soundscaped-pcm-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cache = PCMCache(directory: path, budgetBytes: size - 1, buildPolicy: nil, logger: logger)
        #expect(cache.build(data) == nil)
        let source = try LoopSource(data: data, cache: cache, logger: logger)
        #expect(source.build == nil && !source.isCached)
        #expect(try read(source, count: 48_000) == reference(data, from: 0, count: 48_000))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty ?? true, "something was written")
    }

    @Test func theLeastRecentlyPlayedFilesMakeRoomWithinTheBudget() throws {
        let rain = try rain()
        let wind = try SoundscapeData(id: SoundscapeID("wind")!, gain: 1, contents: try bundledBytes("wind.opus"))
        let ocean = try SoundscapeData(id: SoundscapeID("ocean-waves")!, gain: 1, contents: try bundledBytes("ocean-waves.opus"))
        let path = NSTemporaryDirectory() + "soundscaped-pcm-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Room for two of the three 80-second loops.
        let budget = PCMCache.fileBytes(for: rain) * 2 + 1000
        let cache = PCMCache(directory: path, budgetBytes: budget, buildPolicy: nil, logger: logger)
        for data in [rain, wind] {
            #expect(try #require(cache.build(data)).wait(timeout: .seconds(60)))
        }
        // Playing rain makes it the most recently used; wind was played longer ago.
        let old = timespec(tv_sec: 1_000_000, tv_nsec: 0)
        var times = [old, old]
        #expect(utimensat(AT_FDCWD, cache.path(for: wind), &times, 0) == 0)
        _ = try #require(cache.reader(for: rain))
        #expect(try #require(cache.build(ocean)).wait(timeout: .seconds(60)))
        #expect(!FileManager.default.fileExists(atPath: cache.path(for: wind)), "the least recently played loop stays")
        #expect(FileManager.default.fileExists(atPath: cache.path(for: rain)))
        #expect(FileManager.default.fileExists(atPath: cache.path(for: ocean)))
        let total = try FileManager.default.contentsOfDirectory(atPath: path).reduce(Int64(0)) {
            $0 + Int64(try FileManager.default.attributesOfItem(atPath: path + "/" + $1)[.size] as! Int)
        }
        #expect(total <= budget)
    }

    @Test func aPartialFileLeftByACrashIsRemovedBeforeTheNextBuild() throws {
        let data = try rain()
        let path = NSTemporaryDirectory() + "soundscaped-pcm-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let stale = path + "/wind-0123456789abcdef.f32.tmp-99999"
        try Data(count: 4096).write(to: URL(fileURLWithPath: stale))
        let cache = PCMCache(directory: path, buildPolicy: nil, logger: logger)
        #expect(cache.makeRoom(for: PCMCache.fileBytes(for: data), soundscape: data.id) == nil)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }
}
