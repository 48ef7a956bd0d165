import COpusFile
import SoundscapeCore

/// Decodes a soundscape as an endless, gapless loop of 48 kHz stereo floats.
///
/// At the end of the stream it seeks to sample 0, which libopusfile does
/// sample-exactly (pre-skip and end trimming included), so the seam is exactly
/// where the encoder put it. Runs on the decoder thread, never the RT thread.
final class OpusLoopDecoder {
    let data: SoundscapeData
    private let handle: OpusFileHandle
    private var file: OpaquePointer { handle.file }
    /// The frame of the loop the next read starts at.
    private(set) var position: Int64 = 0

    /// Starts at `position` (0 = the loop's start), sample-exactly.
    init(data: SoundscapeData, position: Int64 = 0) throws(SoundscapeDecodeError) {
        do {
            handle = try OpusFileHandle(descriptor: data.descriptor, size: data.size)
        } catch {
            throw SoundscapeDecodeError(soundscape: data.id, reason: OpusFileError.describe(error.code))
        }
        self.data = data
        let target = position % data.frames
        guard target > 0 else { return }
        // Opus converges after a seek rather than restarting exactly: libopusfile
        // pre-rolls 80 ms, which still leaves errors near 1e-2 for a moment. Seeking
        // a second early and decoding up to the frame leaves them below 1e-7.
        let start = max(0, target - Self.convergenceFrames)
        let seek = op_pcm_seek(file, start)
        guard seek == 0 else {
            throw SoundscapeDecodeError(soundscape: data.id, reason: OpusFileError.describe(seek))
        }
        self.position = start
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
        defer { scratch.deallocate() }
        while self.position < target {
            try read(into: scratch, frames: Int(min(4096, target - self.position)))
        }
    }

    static let convergenceFrames: Int64 = 48_000

    /// Fills `frames` stereo frames at `destination`, wrapping at the loop end.
    func read(into destination: UnsafeMutablePointer<Float>, frames: Int) throws(SoundscapeDecodeError) {
        var done = 0
        var emptyReads = 0
        var holes = 0
        while done < frames {
            let result = op_read_float_stereo(file, destination + done * 2, Int32((frames - done) * 2))
            if result > 0 {
                done += Int(result)
                position += Int64(result)
                emptyReads = 0
                holes = 0
            } else if result == OP_HOLE {
                // A damaged page: libopusfile skips it and goes on; only a run of them is fatal.
                holes += 1
                guard holes < 8 else {
                    throw SoundscapeDecodeError(soundscape: data.id, reason: OpusFileError.describe(result))
                }
            } else if result == 0 {
                // End of stream: loop. Two empty passes in a row mean there is no audio at all.
                emptyReads += 1
                guard emptyReads < 2 else {
                    throw SoundscapeDecodeError(soundscape: data.id, reason: "the stream yields no audio")
                }
                let seek = op_pcm_seek(file, 0)
                guard seek == 0 else {
                    throw SoundscapeDecodeError(soundscape: data.id, reason: OpusFileError.describe(seek))
                }
                position = 0
            } else {
                throw SoundscapeDecodeError(soundscape: data.id, reason: OpusFileError.describe(result))
            }
        }
    }
}
