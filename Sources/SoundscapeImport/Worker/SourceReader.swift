import CSoundscapeCodecs
import Glibc

/// A recording opened with libsndfile (WAV, FLAC, Ogg Vorbis, Ogg Opus, MP3 and the rest it
/// reads), streamed as 48 kHz interleaved stereo: downmixed (mono to both sides; more
/// channels, the even ones left and the odd ones right) and resampled with libsoxr.
/// Opening it again from the same descriptor streams exactly the same frames.
final class SourceReader {
    static let chunkFrames = 4096

    let channels: Int
    let sampleRate: Int
    /// What the header says (libsndfile's estimate for MP3).
    let declaredFrames: Int
    let format: Int32
    private let file: OpaquePointer
    private var resampler: soxr_t?

    init(descriptor: Int32) throws(ImportError) {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw .unreadable("cannot seek in it") }
        var info = SF_INFO()
        guard let file = sf_open_fd(descriptor, Int32(SFM_READ), &info, 0) else {
            throw .unreadable(String(cString: sf_strerror(nil)))
        }
        self.file = file
        channels = Int(info.channels)
        sampleRate = Int(info.samplerate)
        declaredFrames = Int(info.frames)
        format = info.format
        guard (1...64).contains(channels) else {
            sf_close(file)
            throw .unsupported("\(channels) channels: at most 64 are read")
        }
        guard (8000...192_000).contains(sampleRate) else {
            sf_close(file)
            throw .unsupported("a sample rate of \(sampleRate) Hz: 8 to 192 kHz are read")
        }
        if sampleRate != LoopPlanner.sampleRate {
            var error: soxr_error_t?
            var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            resampler = soxr_create(Double(sampleRate), Double(LoopPlanner.sampleRate), 2, &error, &io, &quality, nil)
            if let error {
                sf_close(file)
                throw .unsupported("cannot resample from \(sampleRate) Hz: \(String(cString: error))")
            }
        }
    }

    deinit {
        sf_close(file)
        if let resampler { soxr_delete(resampler) }
    }

    /// Whether the header's length can be trusted to find a file cut short (not MP3's estimate).
    var declaresExactLength: Bool {
        format & Int32(SF_FORMAT_TYPEMASK) != Int32(SF_FORMAT_MPEG) && declaredFrames > 0
    }

    /// Streams the recording to `body`, chunk by chunk, until it ends or `body` says false.
    /// Returns the source frames read.
    @discardableResult
    func stream(_ body: (UnsafeBufferPointer<Float>) throws(ImportError) -> Bool) throws(ImportError) -> Int {
        var raw = [Float](repeating: 0, count: Self.chunkFrames * channels)
        var stereo = [Float](repeating: 0, count: Self.chunkFrames * 2)
        let ratio = Double(LoopPlanner.sampleRate) / Double(sampleRate)
        var resampled = [Float](repeating: 0, count: (Int(Double(Self.chunkFrames) * ratio) + 64) * 2)
        var read = 0
        while true {
            let frames = raw.withUnsafeMutableBufferPointer { Int(sf_readf_float(file, $0.baseAddress, sf_count_t(Self.chunkFrames))) }
            if frames <= 0 {
                let error = sf_error(file)
                if error != 0 { throw .unreadable(String(cString: sf_strerror(file))) }
                break
            }
            read += frames
            downmix(raw, frames: frames, into: &stereo)
            guard let resampler else {
                if try !stereo.withUnsafeBufferPointer({ (all) throws(ImportError) -> Bool in
                    try body(UnsafeBufferPointer(rebasing: all[0..<(2 * frames)]))
                }) {
                    return read
                }
                continue
            }
            var consumed = 0
            while consumed < frames {
                var used = 0
                var made = 0
                let error = stereo.withUnsafeBufferPointer { input in
                    resampled.withUnsafeMutableBufferPointer { output in
                        soxr_process(
                            resampler, input.baseAddress! + 2 * consumed, frames - consumed, &used,
                            output.baseAddress, output.count / 2, &made)
                    }
                }
                if let error { throw .unsupported("resampling failed: \(String(cString: error))") }
                consumed += used
                if made > 0, try !deliver(resampled, made, body) { return read }
                if used == 0 && made == 0 { break }
            }
        }
        // The resampler's last frames.
        if let resampler {
            while true {
                var made = 0
                let error = resampled.withUnsafeMutableBufferPointer { output in
                    soxr_process(resampler, nil, 0, nil, output.baseAddress, output.count / 2, &made)
                }
                if let error { throw .unsupported("resampling failed: \(String(cString: error))") }
                if made == 0 { break }
                if try !deliver(resampled, made, body) { break }
            }
        }
        return read
    }

    private func deliver(
        _ buffer: [Float], _ frames: Int, _ body: (UnsafeBufferPointer<Float>) throws(ImportError) -> Bool
    ) throws(ImportError) -> Bool {
        try buffer.withUnsafeBufferPointer { (all) throws(ImportError) -> Bool in
            try body(UnsafeBufferPointer(rebasing: all[0..<(2 * frames)]))
        }
    }

    private func downmix(_ raw: [Float], frames: Int, into stereo: inout [Float]) {
        switch channels {
        case 1:
            for frame in 0..<frames {
                stereo[2 * frame] = raw[frame]
                stereo[2 * frame + 1] = raw[frame]
            }
        case 2:
            for index in 0..<(2 * frames) { stereo[index] = raw[index] }
        default:
            let lefts = Float((channels + 1) / 2)
            let rights = Float(channels / 2)
            for frame in 0..<frames {
                var left: Float = 0
                var right: Float = 0
                for channel in 0..<channels {
                    if channel % 2 == 0 { left += raw[frame * channels + channel] } else { right += raw[frame * channels + channel] }
                }
                stereo[2 * frame] = left / lefts
                stereo[2 * frame + 1] = right / rights
            }
        }
    }
}
