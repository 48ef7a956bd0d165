import Foundation
import Testing
import SoundscapeCore
@testable import SoundscapeAudio

/// The checkout's `soundscapes/` folder, found by walking up from this file.
func bundledSoundscapes() throws -> URL {
    var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            return directory.appendingPathComponent("soundscapes")
        }
        directory.deleteLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile)
}

func bundledBytes(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: try bundledSoundscapes().appendingPathComponent(name)))
}

/// Start offsets of the Ogg pages in a well-formed file, plus its length.
func pageBoundaries(_ bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = 0
    while offset + 27 <= bytes.count {
        offsets.append(offset)
        let segments = Int(bytes[offset + 26])
        let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
        offset += 27 + segments + body
    }
    return offsets + [offset]
}

let rainID = SoundscapeID("rain")!

@Suite struct OggPageScanTests {
    @Test(arguments: ["rain.opus", "ocean-waves.opus", "brown-noise.opus", "wind.opus"])
    func bundledFilesAreComplete(name: String) throws {
        let bytes = try bundledBytes(name)
        #expect(OggPageScan.truncation(in: bytes) == nil)
        #expect(pageBoundaries(bytes).last == bytes.count)
    }

    @Test func cutsAnywhereAreReportedAsTruncated() throws {
        let bytes = try bundledBytes("rain.opus")
        let pages = pageBoundaries(bytes)
        try #require(pages.count > 4)
        let lastPage = pages[pages.count - 2]
        let cuts: [(cut: Int, expected: String)] = [
            (20, "truncated: the last Ogg page header is cut off"),  // inside the first header
            (27, "truncated: the last Ogg page is cut off"),  // header without its segment table
            (pages[1] + 10, "truncated: the last Ogg page header is cut off"),  // inside the second header
            ((pages[2] + pages[3]) / 2, "truncated: the file ends inside an Ogg page"),  // inside an audio page
            (bytes.count / 2, "truncated"),  // anywhere in the middle
            (bytes.count - 1, "truncated: the file ends inside an Ogg page"),  // one byte short
            (pages[2], "truncated: the stream has no end-of-stream page"),  // after the headers
            (lastPage, "truncated: the stream has no end-of-stream page"),  // a page boundary before the last page
        ]
        for (cut, expected) in cuts {
            let problem = OggPageScan.truncation(in: Array(bytes[..<cut]))
            #expect(problem?.hasPrefix(expected) == true, "cut at \(cut) of \(bytes.count): \(String(describing: problem))")
        }
    }

    @Test func garbageAndWAVAreNotOggOpus() {
        var generator = SeededBytes(seed: 7)
        let garbage = (0..<4096).map { _ in generator.next() }
        let wav: [UInt8] =
            Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WAVEfmt ".utf8)
            + [16, 0, 0, 0, 1, 0, 2, 0, 0x80, 0xBB, 0, 0, 0, 0xEE, 2, 0, 4, 0, 16, 0] + Array("data".utf8) + [0, 0, 0, 0]
        for bytes in [garbage, wav, [], Array("Ogg".utf8)] {
            #expect(OggPageScan.truncation(in: bytes)?.hasPrefix("not an Ogg Opus file") == true)
        }
    }

    @Test func bytesAfterTheLastPageAreDamage() throws {
        let bytes = try bundledBytes("rain.opus")
        let problem = OggPageScan.truncation(in: bytes + Array(repeating: 0x55, count: 64))
        #expect(problem == "damaged: no Ogg page at byte \(bytes.count)")
    }
}

@Suite struct SoundscapeDataTests {
    @Test func bundledRainIsExactlyEightySeconds() throws {
        let data = try SoundscapeData(id: rainID, gain: 0.78, contents: try bundledBytes("rain.opus"))
        #expect(data.frames == 3_840_000)
        #expect(data.duration == .seconds(80))
        #expect(data.gain == 0.78)
        #expect(data.id == rainID)
    }

    @Test func readingTheFileGivesWhatTheBytesGive() throws {
        let path = try bundledSoundscapes().appendingPathComponent("rain.opus").path
        let fromFile = try SoundscapeData(id: rainID, gain: 0.78, path: path)
        let fromBytes = try SoundscapeData(id: rainID, gain: 0.78, contents: try bundledBytes("rain.opus"))
        #expect(fromFile.frames == fromBytes.frames)
        #expect(fromFile.fingerprint == fromBytes.fingerprint)
        #expect(fromFile.size == fromBytes.size)
    }

    @Test func aFileDeletedOrReplacedAfterLoadingStillDecodesAsItWas() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundscape-pin-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("rain.opus").path
        try Data(try bundledBytes("rain.opus")).write(to: URL(fileURLWithPath: path))

        let pinned = try SoundscapeData(id: rainID, gain: 1, path: path)
        // Replaced by a rename (how installs and editors save), then deleted.
        let other = directory.appendingPathComponent("wind.opus").path
        try Data(try bundledBytes("wind.opus")).write(to: URL(fileURLWithPath: other))
        #expect(rename(other, path) == 0)
        #expect(unlink(path) == 0)

        let reference = try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("rain.opus"))
        let frames = 48_000
        let got = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
        let want = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
        defer { got.deallocate(); want.deallocate() }
        try OpusLoopDecoder(data: pinned, position: 96_000).read(into: got, frames: frames)
        try OpusLoopDecoder(data: reference, position: 96_000).read(into: want, frames: frames)
        #expect((0..<(frames * 2)).allSatisfy { got[$0] == want[$0] })
        #expect((0..<(frames * 2)).contains { want[$0] != 0 })
    }

    @Test func unreadableFilesAreNamedInTheError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundscape-data-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let missing = directory.appendingPathComponent("gone.opus").path
        let missingError = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, path: missing)
        }
        #expect(missingError?.reason == "the file \(missing) is missing")

        let folder = directory.path
        let folderError = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, path: folder)
        }
        #expect(folderError?.reason == "cannot read \(folder): Is a directory")

        let empty = directory.appendingPathComponent("empty.opus")
        try Data().write(to: empty)
        let emptyError = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, path: empty.path)
        }
        #expect(emptyError?.reason == "the file is empty")
    }

    @Test func emptyContentsAreRefused() {
        let error = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, contents: [])
        }
        #expect(error == SoundscapeDecodeError(soundscape: rainID, reason: "the file is empty"))
        #expect(error?.description == "cannot play 'rain': the file is empty")
    }

    @Test func randomBytesAreRefused() {
        var generator = SeededBytes(seed: 99)
        let error = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, contents: (0..<10_000).map { _ in generator.next() })
        }
        #expect(error?.soundscape == rainID)
        #expect(error?.reason.hasPrefix("not an Ogg Opus file") == true)
    }

    @Test func truncatedFileIsRefused() throws {
        let bytes = try bundledBytes("rain.opus")
        let error = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, contents: Array(bytes[..<(bytes.count * 3 / 4)]))
        }
        #expect(error?.reason.hasPrefix("truncated") == true)
        #expect(error?.description.hasPrefix("cannot play 'rain': truncated") == true)
    }

    @Test func completeOggPageThatIsNotOpusIsRefused() {
        // One whole page flagged begin- and end-of-stream whose body is not an Opus header.
        let body = Array("hello, not opus".utf8)
        let page: [UInt8] =
            Array("OggS".utf8) + [0, 0x06] + [UInt8](repeating: 0, count: 8)
            + [1, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + [1, UInt8(body.count)] + body
        #expect(OggPageScan.truncation(in: page) == nil)
        let error = #expect(throws: SoundscapeDecodeError.self) {
            try SoundscapeData(id: rainID, gain: 1, contents: page)
        }
        #expect(error?.reason.isEmpty == false)
        #expect(error?.reason.hasPrefix("decoder error") == false)
    }
}

@Suite struct OpusLoopDecoderTests {
    @Test func loopSeamIsGaplessAndSampleExact() throws {
        let data = try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("rain.opus"))
        let loop = Int(data.frames)
        let extra = 4800
        let decoder = try OpusLoopDecoder(data: data)

        var position = 0
        var tail: [Float] = []
        var buffer = [Float](repeating: 0, count: 2 * 30_000)
        let pattern = [4096, 777, 10_000, 333, 1, 19_999]
        var index = 0
        var straddled = false
        while position < loop + extra {
            var chunk = pattern[index % pattern.count]
            index += 1
            // Make sure one read spans the seam.
            if !straddled, position < loop, position + chunk >= loop - 1000 {
                chunk = loop - position + 1500
                straddled = true
            }
            chunk = min(chunk, loop + extra - position)
            try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: chunk) }
            let end = position + chunk
            if end > loop {
                let skip = max(0, loop - position)
                tail += buffer[(skip * 2)..<(chunk * 2)]
            }
            position = end
        }
        #expect(straddled)
        #expect(tail.count == extra * 2)

        let fresh = try OpusLoopDecoder(data: data)
        var head = [Float](repeating: .nan, count: extra * 2)
        try head.withUnsafeMutableBufferPointer { try fresh.read(into: $0.baseAddress!, frames: extra) }
        #expect(head.contains { $0 != 0 }, "the head must not be silence, or the comparison proves nothing")
        let firstDifference = zip(tail, head).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "first difference at sample \(firstDifference?.offset ?? -1)")
    }

    @Test func decodedAudioIsNotSilentAndWithinFullScale() throws {
        let data = try SoundscapeData(id: rainID, gain: 1, contents: try bundledBytes("rain.opus"))
        let decoder = try OpusLoopDecoder(data: data)
        var buffer = [Float](repeating: .nan, count: 2 * 48_000)
        try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: 48_000) }
        #expect(!buffer.contains { $0.isNaN })
        let rms = (buffer.reduce(0) { $0 + Double($1 * $1) } / Double(buffer.count)).squareRoot()
        #expect(rms > 0.01)
        #expect(buffer.allSatisfy { abs($0) < 1 })
    }
}

@Suite struct RouteTrackerTests {
    static let ours: UInt32 = 40
    static let sinkA: UInt32 = 50
    static let sinkB: UInt32 = 51

    func tracker() -> RouteTracker {
        var tracker = RouteTracker()
        tracker.addNode(id: Self.ours, name: "soundscaped", mediaClass: "Stream/Output/Audio")
        tracker.addNode(id: Self.sinkA, name: "sink-a", mediaClass: "Audio/Sink")
        tracker.addNode(id: Self.sinkB, name: "sink-b", mediaClass: "Audio/Sink")
        return tracker
    }

    @Test func followsTheLinkFromOurNodeToTheSink() {
        var tracker = tracker()
        #expect(tracker.route(from: Self.ours) == nil)
        #expect(tracker.route(from: nil) == nil)
        tracker.addLink(id: 100, output: Self.ours, input: Self.sinkA)
        #expect(tracker.route(from: Self.ours) == "sink-a")
        // Links of other nodes do not matter.
        tracker.addLink(id: 90, output: 77, input: Self.sinkB)
        tracker.addLink(id: 91, output: Self.sinkA, input: Self.sinkB)
        #expect(tracker.route(from: Self.ours) == "sink-a")
        #expect(tracker.route(from: nil) == nil)
    }

    @Test func removingTheLinkClearsTheRoute() {
        var tracker = tracker()
        tracker.addLink(id: 100, output: Self.ours, input: Self.sinkA)
        tracker.remove(id: 100)
        #expect(tracker.route(from: Self.ours) == nil)
    }

    @Test func removingTheSinkNodeClearsTheRoute() {
        var tracker = tracker()
        tracker.addLink(id: 100, output: Self.ours, input: Self.sinkA)
        tracker.remove(id: Self.sinkA)
        #expect(tracker.route(from: Self.ours) == nil)
    }

    @Test func lowestLinkIDWins() {
        var tracker = tracker()
        tracker.addLink(id: 120, output: Self.ours, input: Self.sinkB)
        tracker.addLink(id: 110, output: Self.ours, input: Self.sinkA)
        tracker.addLink(id: 130, output: Self.ours, input: Self.sinkB)
        #expect(tracker.route(from: Self.ours) == "sink-a")
        tracker.remove(id: 110)
        #expect(tracker.route(from: Self.ours) == "sink-b")
    }

    @Test func removeAllForgetsEverything() {
        var tracker = tracker()
        tracker.addLink(id: 100, output: Self.ours, input: Self.sinkA)
        tracker.removeAll()
        #expect(tracker.route(from: Self.ours) == nil)
        #expect(tracker.nodes.isEmpty)
        #expect(tracker.links.isEmpty)
    }
}

/// Deterministic bytes for "random" inputs.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}
