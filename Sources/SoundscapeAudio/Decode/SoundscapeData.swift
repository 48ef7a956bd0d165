import COpusFile
import Glibc
import SoundscapeCore
import SoundscapeSystem

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

/// A soundscape's Ogg Opus file, validated and held open.
///
/// Decoders read it through the open descriptor (`OpusFileHandle`), on the
/// decoder thread, never the RT thread, so the compressed bytes stay in the
/// page cache rather than our heap (700 KB for an 80 s loop, megabytes for
/// long ones). The descriptor pins the file: one deleted, or replaced by a
/// rename, while it plays keeps playing as it was; only an edit in place
/// reaches the decoder, which then reports a decode error. Once the loop is in
/// the PCM cache, playback does not decode at all.
public final class SoundscapeData: @unchecked Sendable {
    public let id: SoundscapeID
    /// Linear level trim from the manifest, applied in the mixer.
    public let gain: Float
    /// Loop length in frames at 48 kHz.
    public let frames: Int64
    /// FNV-1a of the compressed bytes: names the decoded copy in the PCM cache,
    /// so an edited file never plays a stale decode.
    public let fingerprint: UInt64
    /// Read-only, owned: closed in deinit. Readers use pread, so sharing is safe.
    let descriptor: Int32
    /// The file's size when it was validated.
    let size: Int64

    /// What a memo kept by the caller knows of a file opened before, for the file
    /// as `fstat` describes it now: its fingerprint, and its length in frames if
    /// it was validated whole as it is.
    public struct Known: Sendable, Equatable {
        public var fingerprint: UInt64
        public var frames: Int64?

        public init(fingerprint: UInt64, frames: Int64? = nil) {
            self.fingerprint = fingerprint
            self.frames = frames
        }
    }

    /// Opens and validates the file at `path`. `known` may say what a memo kept
    /// by the caller knows of the file as `fstat` describes the open descriptor:
    /// with nil, the whole file is hashed; with its frames too, it is not
    /// validated again either (its pages walked, its Opus headers parsed: about
    /// 0.3 ms for a built-in loop, each time a mix of them is played).
    public convenience init(
        id: SoundscapeID, gain: Float, path: String,
        known: (stat) -> Known? = { _ in nil }
    ) throws(SoundscapeDecodeError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw SoundscapeDecodeError(
                soundscape: id,
                reason: code == ENOENT
                    ? "the file \(path) is missing" : "cannot read \(path): \(String(cString: strerror(code)))")
        }
        try self.init(id: id, gain: gain, taking: descriptor, path: path, known: known)
    }

    /// `contents` as if read from a file (an unlinked temporary one): for tests and tools.
    public convenience init(id: SoundscapeID, gain: Float, contents: [UInt8]) throws(SoundscapeDecodeError) {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/soundscape-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw SoundscapeDecodeError(soundscape: id, reason: "cannot make a temporary file: \(String(cString: strerror(errno)))")
        }
        unlink(template)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        guard contents.withUnsafeBytes({ FileSystem.writeAll(descriptor, $0) }) else {
            close(descriptor)
            throw SoundscapeDecodeError(soundscape: id, reason: "cannot write a temporary file")
        }
        try self.init(id: id, gain: gain, taking: descriptor, path: "(memory)")
    }

    /// Takes ownership of `descriptor`: kept if the file is a complete,
    /// decodable Ogg Opus stream (or `known` says it was, as it is), closed if not.
    private convenience init(
        id: SoundscapeID, gain: Float, taking descriptor: Int32, path: String,
        known: (stat) -> Known? = { _ in nil }
    ) throws(SoundscapeDecodeError) {
        func failure(_ reason: String) -> SoundscapeDecodeError {
            close(descriptor)
            return SoundscapeDecodeError(soundscape: id, reason: reason)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw failure("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw failure("cannot read \(path): " + (info.st_mode & S_IFMT == S_IFDIR ? "Is a directory" : "not a regular file"))
        }
        let size = Int64(info.st_size)
        guard size > 0 else { throw failure("the file is empty") }
        let known = known(info)
        if let known, let frames = known.frames {
            self.init(id: id, gain: gain, frames: frames, descriptor: descriptor, size: size, fingerprint: known.fingerprint)
            return
        }
        if let problem = OggPageScan.truncation(
            size: Int(size),
            read: { offset, buffer in
                FileSystem.read(descriptor, into: buffer, at: Int64(offset))
            })
        {
            throw failure(problem)
        }
        let total: Int64
        do {
            let handle = try OpusFileHandle(descriptor: descriptor, size: size)
            total = op_pcm_total(handle.file, -1)
        } catch {
            throw failure(OpusFileError.describe(error.code))
        }
        guard total > 0 else {
            throw failure(total < 0 ? OpusFileError.describe(Int32(total)) : "the stream holds no audio")
        }
        guard let fingerprint = known?.fingerprint ?? Self.fnv1a(descriptor, size: size) else {
            throw failure("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        self.init(id: id, gain: gain, frames: total, descriptor: descriptor, size: size, fingerprint: fingerprint)
    }

    private init(id: SoundscapeID, gain: Float, frames: Int64, descriptor: Int32, size: Int64, fingerprint: UInt64) {
        self.id = id
        self.gain = gain
        self.frames = frames
        self.descriptor = descriptor
        self.size = size
        self.fingerprint = fingerprint
    }

    deinit {
        close(descriptor)
    }

    /// FNV-1a of the file's first `size` bytes, read in 64 KB pieces; nil if it cannot be read whole.
    static func fnv1a(_ descriptor: Int32, size: Int64) -> UInt64? {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { chunk.deallocate() }
        var hash = fnv1aBasis
        var offset: Int64 = 0
        while offset < size {
            let want = Int(min(Int64(chunk.count), size - offset))
            let got = FileSystem.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: chunk[..<want]), at: offset)
            guard got == want else { return nil }
            hash = fnv1a(UnsafeRawBufferPointer(rebasing: chunk[..<got]), continuing: hash)
            offset += Int64(got)
        }
        return hash
    }

    static let fnv1aBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    static func fnv1a(_ bytes: UnsafeRawBufferPointer, continuing hash: UInt64 = fnv1aBasis) -> UInt64 {
        var hash = hash
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
        truncation(size: bytes.count) { offset, buffer in
            let count = min(buffer.count, bytes.count - offset)
            buffer.copyBytes(from: bytes[offset..<(offset + count)])
            return count
        }
    }

    /// Walks the page headers only (27 bytes and the segment table each), so a
    /// file is checked without reading its audio. `read(offset, buffer)` fills
    /// what it can of `buffer` from `offset` and returns the count, -1 on error.
    static func truncation(size: Int, read: (Int, UnsafeMutableRawBufferPointer) -> Int) -> String? {
        let header = UnsafeMutableRawBufferPointer.allocate(byteCount: 27 + 255, alignment: 8)
        defer { header.deallocate() }
        func isCapture(_ count: Int) -> Bool {
            count >= 4 && header[0] == 0x4F && header[1] == 0x67 && header[2] == 0x67 && header[3] == 0x53
        }
        guard size >= 4, isCapture(read(0, UnsafeMutableRawBufferPointer(rebasing: header[..<4]))) else {
            return "not an Ogg Opus file (no Ogg page at the start)"
        }
        var offset = 0
        var lastFlags: UInt8 = 0
        while offset < size {
            guard offset + 27 <= size else { return "truncated: the last Ogg page header is cut off" }
            let got = read(offset, UnsafeMutableRawBufferPointer(rebasing: header[..<min(header.count, size - offset)]))
            guard got >= 27 else { return got < 0 ? "cannot read the file" : "truncated: the last Ogg page header is cut off" }
            guard isCapture(got) else { return "damaged: no Ogg page at byte \(offset)" }
            lastFlags = header[5]
            let segments = Int(header[26])
            guard offset + 27 + segments <= size, got >= 27 + segments else { return "truncated: the last Ogg page is cut off" }
            var body = 0
            for index in 0..<segments { body += Int(header[27 + index]) }
            let next = offset + 27 + segments + body
            guard next <= size else {
                return "truncated: the file ends inside an Ogg page (\(size) of \(next) bytes)"
            }
            offset = next
        }
        guard lastFlags & 0x04 != 0 else { return "truncated: the stream has no end-of-stream page" }
        return nil
    }
}
