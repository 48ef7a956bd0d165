/// What a recording's first bytes say it is, and whether its header promises more than the
/// file holds: read before a decoder sees it, so that a WAV cut short (which libsndfile
/// quietly plays as far as it goes) is refused as damaged, and the error can name the
/// container. Pure, on any bytes (Fuzz/: `container-probe`).
public enum ContainerProbe {
    public enum Kind: String, Sendable, Equatable {
        case wav = "WAV"
        case flac = "FLAC"
        case oggVorbis = "Ogg Vorbis"
        case oggOpus = "Ogg Opus"
        case ogg = "Ogg"
        case mp3 = "MP3"
        case aiff = "AIFF"
        case unknown = "unknown"
    }

    public struct Finding: Sendable, Equatable {
        public var kind: Kind
        /// Why the file cannot be right (its header promises more than it holds); nil if nothing is seen.
        public var problem: String?
    }

    /// How many of the first bytes `probe` looks at.
    public static let prefixLength = 65536

    public static func probe(_ bytes: [UInt8], fileSize: Int) -> Finding {
        func has(_ text: String, at offset: Int) -> Bool {
            let magic = Array(text.utf8)
            return bytes.count >= offset + magic.count && Array(bytes[offset..<(offset + magic.count)]) == magic
        }
        if has("RIFF", at: 0) && has("WAVE", at: 8) { return wav(bytes, fileSize: fileSize) }
        if has("fLaC", at: 0) { return Finding(kind: .flac) }
        if has("FORM", at: 0) && (has("AIFF", at: 8) || has("AIFC", at: 8)) { return Finding(kind: .aiff) }
        if has("OggS", at: 0) {
            guard bytes.count >= 27 else { return Finding(kind: .ogg) }
            let packet = 27 + Int(bytes[26])
            if has("OpusHead", at: packet) { return Finding(kind: .oggOpus) }
            if has("vorbis", at: packet + 1) { return Finding(kind: .oggVorbis) }
            return Finding(kind: .ogg)
        }
        if has("ID3", at: 0) { return Finding(kind: .mp3) }
        if bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0 { return Finding(kind: .mp3) }
        return Finding(kind: .unknown)
    }

    /// RIFF/WAVE: the chunks up to `data`; its length against the bytes the file has after it.
    static func wav(_ bytes: [UInt8], fileSize: Int) -> Finding {
        func little32(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        }
        var offset = 12
        var byteRate = 0
        while let size = little32(offset + 4) {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let body = offset + 8
            if id == "fmt " { byteRate = little32(body + 8) ?? 0 }
            if id == "data" {
                // 0 and 0xFFFFFFFF are what a writer that could not seek back leaves: no promise made.
                guard size != 0, size != 0xFFFF_FFFF else { return Finding(kind: .wav) }
                let held = max(0, fileSize - body)
                guard held < size else { return Finding(kind: .wav) }
                func amount(_ bytes: Int) -> String {
                    guard byteRate > 0 else { return "\(bytes) bytes" }
                    let tenths = bytes * 10 / byteRate
                    return "\(tenths / 10).\(tenths % 10) s"
                }
                return Finding(
                    kind: .wav,
                    problem: "the file is damaged or cut short: its header promises \(amount(size)) of audio, the file holds \(amount(held))")
            }
            // Chunks are padded to an even length.
            let (next, overflow) = body.addingReportingOverflow(size + (size & 1))
            guard !overflow, next > offset else { break }
            offset = next
        }
        return Finding(kind: .wav)
    }
}

extension ContainerProbe.Finding {
    public init(kind: ContainerProbe.Kind) {
        self.init(kind: kind, problem: nil)
    }
}
