import Foundation
import NIOCore
import SoundscapeCore
import Testing
@testable import SoundscapeDaemon

/// Inputs the fuzzers (Fuzz/, scripts/fuzz) once broke, kept as regression tests.
@Suite struct FuzzRegressionTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz/\(name)")
        return Array(try Data(contentsOf: url))
    }

    /// The signer-lines target's property: however the output arrives, the same lines.
    static func lines(_ bytes: [UInt8], reads: [ArraySlice<UInt8>], limit: Int) -> [String] {
        var buffer = ByteBuffer()
        var lines: [String] = []
        for read in reads {
            buffer.writeBytes(read)
            while let line = LineFrameDecoder.nextLine(from: &buffer, maximumLength: limit) { lines.append(line) }
            buffer.discardReadBytes()
        }
        return lines
    }

    /// The fuzzer's cut: reads of 1 to 17 bytes drawn from the first byte.
    static func split(_ bytes: [UInt8], seed: UInt8) -> [ArraySlice<UInt8>] {
        var state = UInt32(seed) | 0x1_0000
        var reads: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            state = state &* 1_103_515_245 &+ 12_345
            let length = 1 + Int((state >> 16) % 17)
            reads.append(bytes[start..<min(bytes.count, start + length)])
            start += length
        }
        return reads
    }

    @Test func signerLinesAreTheSameHoweverTheOutputArrives() throws {
        let bytes = try Self.fixture("signer-lines-split-utf8")
        let input = Array(bytes.dropFirst())
        let whole = Self.lines(input, reads: [input[...]], limit: 32)
        let pieces = Self.lines(input, reads: Self.split(input, seed: bytes[0]), limit: 32)
        #expect(whole == pieces)
    }

    /// The notify-message target's property: a status line, once cleaned, is clean. Cut at
    /// 200 characters just after a space (form feeds removed before it), it kept that space.
    @Test func aCleanedStatusLineIsClean() throws {
        let bytes = try Self.fixture("notify-status-cut-after-space")
        let status = try #require(SignerNotification(parsing: bytes.dropFirst())?.status)
        let line = try #require(SignerStatus.line(status))
        #expect(line == SignerStatus.line(line))
        #expect(line.last?.isWhitespace == false)
        #expect(line.count <= SignerStatus.maximumStatusLength)
    }
}
