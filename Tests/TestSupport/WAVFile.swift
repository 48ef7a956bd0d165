import Foundation

/// Decoded audio: interleaved float samples in [-1, 1].
public struct AudioClip: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    /// Interleaved: frame 0 ch 0, frame 0 ch 1, frame 1 ch 0, ...
    public var samples: [Float]

    public init(sampleRate: Int, channels: Int, samples: [Float]) {
        precondition(channels > 0 && sampleRate > 0)
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    public var frameCount: Int { samples.count / channels }

    /// Duration in seconds.
    public var duration: Double { Double(frameCount) / Double(sampleRate) }

    /// A sine tone (handy for fixtures without sox).
    public static func sine(
        frequency: Double, amplitude: Float = 0.5, seconds: Double, sampleRate: Int = 48000, channels: Int = 2
    ) -> AudioClip {
        let frames = Int((seconds * Double(sampleRate)).rounded())
        var samples = [Float](repeating: 0, count: frames * channels)
        for f in 0..<frames {
            let v = amplitude * Float(sin(2 * Double.pi * frequency * Double(f) / Double(sampleRate)))
            for c in 0..<channels { samples[f * channels + c] = v }
        }
        return AudioClip(sampleRate: sampleRate, channels: channels, samples: samples)
    }

    /// Digital silence.
    public static func silence(seconds: Double, sampleRate: Int = 48000, channels: Int = 2) -> AudioClip {
        let frames = Int((seconds * Double(sampleRate)).rounded())
        return AudioClip(
            sampleRate: sampleRate, channels: channels, samples: [Float](repeating: 0, count: frames * channels))
    }
}

/// RIFF/WAVE reader and writer.
///
/// Reads PCM (8-bit unsigned, 16/24/32-bit signed) and IEEE float (32/64-bit),
/// including `WAVE_FORMAT_EXTENSIBLE`, with chunks in any order and unknown
/// chunks skipped. A `data` chunk whose size is 0, 0xFFFFFFFF, or larger than
/// the file (header not finalised, e.g. recorder killed) uses the rest of the
/// file, truncated to whole frames.
public enum WAVFile {
    public enum SampleFormat: Sendable {
        case int16
        case float32
    }

    public static func read(_ url: URL) throws -> AudioClip {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw HarnessError("Cannot read WAV file \(url.path): \(error)")
        }
        do {
            return try parse(data)
        } catch let error as HarnessError {
            throw HarnessError("\(url.path): \(error.message)")
        }
    }

    public static func parse(_ data: Data) throws -> AudioClip {
        let bytes = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> UInt32 {
            UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
        }
        func tag(_ o: Int) -> String { String(decoding: bytes[o..<o + 4], as: UTF8.self) }

        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw HarnessError("Not a RIFF/WAVE file (\(bytes.count) bytes)")
        }

        var format: (tag: Int, channels: Int, rate: Int, blockAlign: Int, bits: Int)?
        var dataRange: Range<Int>?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let declared = u32(offset + 4)
            let bodyStart = offset + 8
            let remaining = bytes.count - bodyStart
            if id == "data" {
                var size = Int(declared)
                var sizeWasBogus = false
                if declared == 0 || declared == 0xFFFF_FFFF || size > remaining {
                    size = remaining
                    sizeWasBogus = true
                }
                dataRange = bodyStart..<(bodyStart + size)
                if sizeWasBogus { break }
                offset = bodyStart + size + (size & 1)
                continue
            }
            let size = min(Int(declared), remaining)
            if id == "fmt " {
                guard size >= 16 else { throw HarnessError("fmt chunk too short (\(size) bytes)") }
                var formatTag = u16(bodyStart)
                let bits = u16(bodyStart + 14)
                if formatTag == 0xFFFE {
                    guard size >= 40 else { throw HarnessError("WAVE_FORMAT_EXTENSIBLE fmt chunk too short") }
                    formatTag = u16(bodyStart + 24)  // first two bytes of the SubFormat GUID
                }
                format = (formatTag, u16(bodyStart + 2), Int(u32(bodyStart + 4)), u16(bodyStart + 12), bits)
            }
            offset = bodyStart + size + (size & 1)
        }

        guard let format else { throw HarnessError("WAV file has no fmt chunk") }
        guard let dataRange else { throw HarnessError("WAV file has no data chunk") }
        let channels = format.channels
        guard channels > 0, format.rate > 0 else {
            throw HarnessError("Bad WAV format: \(channels) channels at \(format.rate) Hz")
        }
        let bytesPerSample = format.bits / 8
        switch (format.tag, format.bits) {
        case (1, 8), (1, 16), (1, 24), (1, 32), (3, 32), (3, 64): break
        default:
            throw HarnessError("Unsupported WAV sample format: format tag \(format.tag), \(format.bits) bits")
        }
        let frameBytes = bytesPerSample * channels
        let frames = dataRange.count / frameBytes
        let count = frames * channels
        var samples = [Float](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            let base = dataRange.lowerBound
            switch (format.tag, format.bits) {
            case (1, 8):
                for i in 0..<count { samples[i] = (Float(raw[base + i]) - 128) / 128 }
            case (1, 16):
                for i in 0..<count {
                    let v = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: base + 2 * i, as: Int16.self))
                    samples[i] = Float(v) / 32768
                }
            case (1, 24):
                for i in 0..<count {
                    let o = base + 3 * i
                    let u = Int32(raw[o]) | Int32(raw[o + 1]) << 8 | Int32(raw[o + 2]) << 16
                    let v = (u << 8) >> 8  // sign-extend
                    samples[i] = Float(v) / 8_388_608
                }
            case (1, 32):
                for i in 0..<count {
                    let v = Int32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 4 * i, as: Int32.self))
                    samples[i] = Float(Double(v) / 2_147_483_648)
                }
            case (3, 32):
                for i in 0..<count {
                    let bits = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 4 * i, as: UInt32.self))
                    samples[i] = Float(bitPattern: bits)
                }
            case (3, 64):
                for i in 0..<count {
                    let bits = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 8 * i, as: UInt64.self))
                    samples[i] = Float(Double(bitPattern: bits))
                }
            default:
                break
            }
        }
        return AudioClip(sampleRate: format.rate, channels: channels, samples: samples)
    }

    /// Encodes a clip as a canonical 44-byte-header WAV.
    public static func encode(_ clip: AudioClip, format: SampleFormat = .float32) -> Data {
        let bytesPerSample = format == .int16 ? 2 : 4
        let dataSize = clip.samples.count * bytesPerSample
        var out = Data(capacity: 44 + dataSize)
        func put32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func put16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        out.append(contentsOf: Array("RIFF".utf8))
        put32(UInt32(36 + dataSize))
        out.append(contentsOf: Array("WAVEfmt ".utf8))
        put32(16)
        put16(format == .int16 ? 1 : 3)
        put16(UInt16(clip.channels))
        put32(UInt32(clip.sampleRate))
        put32(UInt32(clip.sampleRate * clip.channels * bytesPerSample))
        put16(UInt16(clip.channels * bytesPerSample))
        put16(UInt16(bytesPerSample * 8))
        out.append(contentsOf: Array("data".utf8))
        put32(UInt32(dataSize))
        switch format {
        case .int16:
            for s in clip.samples {
                let v = Int16(max(-32768, min(32767, (s * 32768).rounded())))
                put16(UInt16(bitPattern: v))
            }
        case .float32:
            for s in clip.samples { put32(s.bitPattern) }
        }
        return out
    }

    public static func write(_ clip: AudioClip, to url: URL, format: SampleFormat = .float32) throws {
        try encode(clip, format: format).write(to: url)
    }
}
