import COpusFile
import Glibc
import SoundscapeCore

/// Why a soundscape cannot be played, in words for the user.
public struct SoundscapeDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public let soundscape: SoundscapeID
    public let reason: String

    public init(soundscape: SoundscapeID, reason: String) {
        self.soundscape = soundscape
        self.reason = reason
    }

    public var description: String { "cannot play '\(soundscape)': \(reason)" }
}

/// A soundscape's compressed Ogg Opus bytes, validated and held in memory.
///
/// Decoding from memory keeps file I/O off the audio path entirely (and a file
/// deleted while it plays keeps playing); a 70 s loop is well under 1 MB.
/// The bytes never change after init, so decoders on any thread may share them.
public final class SoundscapeData: @unchecked Sendable {
    public let id: SoundscapeID
    /// Linear level trim from the manifest, applied in the mixer.
    public let gain: Float
    /// Loop length in frames at 48 kHz.
    public let frames: Int64
    /// FNV-1a of the compressed bytes: names the decoded copy in the PCM cache,
    /// so an edited file never plays a stale decode.
    public let fingerprint: UInt64
    let bytes: UnsafeMutableRawBufferPointer

    /// Reads the file straight into the buffer the decoders share (one copy of
    /// the bytes in memory, never three) and validates it.
    public convenience init(id: SoundscapeID, gain: Float, path: String) throws(SoundscapeDecodeError) {
        let bytes: UnsafeMutableRawBufferPointer
        do {
            bytes = try Self.readWholeFile(path)
        } catch {
            throw SoundscapeDecodeError(soundscape: id, reason: error.code == ENOENT
                ? "the file \(path) is missing" : "cannot read \(path): \(String(cString: strerror(error.code)))")
        }
        try self.init(id: id, gain: gain, taking: bytes)
    }

    /// Validates that `contents` is a complete, decodable Ogg Opus stream.
    public convenience init(id: SoundscapeID, gain: Float, contents: [UInt8]) throws(SoundscapeDecodeError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 16)
        buffer.copyBytes(from: contents)
        try self.init(id: id, gain: gain, taking: UnsafeMutableRawBufferPointer(rebasing: buffer[..<contents.count]))
    }

    /// Takes ownership of `bytes`: kept if they hold a complete, decodable Ogg
    /// Opus stream, deallocated if not.
    private init(id: SoundscapeID, gain: Float, taking bytes: UnsafeMutableRawBufferPointer) throws(SoundscapeDecodeError) {
        func failure(_ reason: String) -> SoundscapeDecodeError {
            bytes.deallocate()
            return SoundscapeDecodeError(soundscape: id, reason: reason)
        }
        guard !bytes.isEmpty else { throw failure("the file is empty") }
        if let problem = OggPageScan.truncation(in: UnsafeRawBufferPointer(bytes)) { throw failure(problem) }

        var error: Int32 = 0
        guard let file = op_open_memory(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, &error) else {
            throw failure(OpusFileError.describe(error))
        }
        defer { op_free(file) }
        let total = op_pcm_total(file, -1)
        guard total > 0 else {
            throw failure(total < 0 ? OpusFileError.describe(Int32(total)) : "the stream holds no audio")
        }
        self.id = id
        self.gain = gain
        self.frames = total
        self.bytes = bytes
        fingerprint = Self.fnv1a(UnsafeRawBufferPointer(bytes))
    }

    struct ReadError: Error { let code: Int32 }

    /// The whole file in a new buffer (at least one byte long, so an empty
    /// file is an empty buffer the validation rejects, not a null one).
    static func readWholeFile(_ path: String) throws(ReadError) -> UnsafeMutableRawBufferPointer {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReadError(code: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ReadError(code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ReadError(code: EISDIR) }
        let size = Int(info.st_size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 16)
        var filled = 0
        while filled < size {
            let got = read(descriptor, buffer.baseAddress! + filled, size - filled)
            if got > 0 {
                filled += got
            } else if got == 0 {
                break   // the file shrank while we read: validation sees what is there
            } else if errno != EINTR {
                let code = errno
                buffer.deallocate()
                throw ReadError(code: code)
            }
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[..<filled])
    }

    deinit {
        bytes.deallocate()
    }

    static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    public var duration: Duration { .milliseconds(frames * 1000 / 48_000) }
}

/// Texts for libopusfile's error codes.
enum OpusFileError {
    static func describe(_ code: Int32) -> String {
        switch code {
        case OP_EREAD: "read error"
        case OP_EFAULT: "internal decoder fault (out of memory?)"
        case OP_EIMPL: "uses an Opus feature this decoder does not implement"
        case OP_EINVAL: "invalid decoder state"
        case OP_ENOTFORMAT: "not an Ogg Opus file"
        case OP_EBADHEADER: "damaged Opus header"
        case OP_EVERSION: "unsupported Opus version"
        case OP_ENOTAUDIO: "not an audio stream"
        case OP_EBADPACKET: "damaged audio packet"
        case OP_EBADLINK: "damaged stream link"
        case OP_ENOSEEK: "stream cannot be seeked, so it cannot loop"
        case OP_EBADTIMESTAMP: "damaged timestamps"
        case OP_HOLE: "data missing in the middle of the stream"
        default: "decoder error \(code)"
        }
    }
}

/// Finds truncation that libopusfile forgives silently: it plays a stream cut
/// short, and the user would hear the loop jump. A complete Ogg stream ends in
/// a whole page with the end-of-stream flag.
enum OggPageScan {
    static func truncation(in bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { truncation(in: $0) }
    }

    static func truncation(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 4, bytes[0] == 0x4F, bytes[1] == 0x67, bytes[2] == 0x67, bytes[3] == 0x53 else {
            return "not an Ogg Opus file (no Ogg page at the start)"
        }
        var offset = 0
        var lastFlags: UInt8 = 0
        while offset < bytes.count {
            guard offset + 27 <= bytes.count else { return "truncated: the last Ogg page header is cut off" }
            guard bytes[offset] == 0x4F, bytes[offset + 1] == 0x67, bytes[offset + 2] == 0x67, bytes[offset + 3] == 0x53 else {
                return "damaged: no Ogg page at byte \(offset)"
            }
            lastFlags = bytes[offset + 5]
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { return "truncated: the last Ogg page is cut off" }
            var body = 0
            for index in 0..<segments { body += Int(bytes[offset + 27 + index]) }
            let next = offset + 27 + segments + body
            guard next <= bytes.count else {
                return "truncated: the file ends inside an Ogg page (\(bytes.count) of \(next) bytes)"
            }
            offset = next
        }
        guard lastFlags & 0x04 != 0 else { return "truncated: the stream has no end-of-stream page" }
        return nil
    }
}
