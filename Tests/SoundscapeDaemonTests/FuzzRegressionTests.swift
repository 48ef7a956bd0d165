import Foundation
import NIOCore
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
}
