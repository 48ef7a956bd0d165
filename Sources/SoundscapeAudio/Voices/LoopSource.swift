import Logging

/// Where one voice's samples come from: the decoded loop in the PCM cache when
/// there is one, else the Opus decoder (while the cache is built beside it).
/// It hands over between the two at the exact frame it has reached, so the
/// switch is inaudible; a cache that fails mid-play falls back to decoding
/// from the same frame.
///
/// Runs on the loop thread, like the decoder it wraps.
final class LoopSource {
    let data: SoundscapeData
    private let cache: PCMCache?
    private let logger: Logger
    private var decoder: OpusLoopDecoder?
    private var reader: PCMLoopReader?
    /// The cache file being built for this loop, if any.
    private(set) var build: PCMCacheBuild?

    init(data: SoundscapeData, cache: PCMCache?, logger: Logger) throws(SoundscapeDecodeError) {
        self.data = data
        self.cache = cache
        self.logger = logger
        if let reader = cache?.reader(for: data) {
            self.reader = reader
        } else {
            decoder = try OpusLoopDecoder(data: data)
            build = cache?.build(data)
        }
    }

    /// Whether samples come from the cache (for tests and logs).
    var isCached: Bool { reader != nil || isLent }

    /// The cache reader is lent out (see `lendReader`); `read` must not be called.
    private(set) var isLent = false

    /// Hands the cache reader to another owner (the data thread, which refills
    /// from the page cache without waiting). Nil while this voice still decodes,
    /// or where the file system cannot read without waiting.
    func lendReader() -> PCMLoopReader? {
        guard !isLent else { return nil }
        adoptFinishedBuild()
        guard let reader, !reader.nonBlockingReadsUnsupported else { return nil }
        self.reader = nil
        isLent = true
        return reader
    }

    /// Takes back the reader `lendReader` gave, at the position it reached.
    func takeBack(_ reader: PCMLoopReader) {
        precondition(isLent, "a reader came back that was never lent")
        self.reader = reader
        isLent = false
    }

    /// Fills `frames` stereo frames at `destination`, wrapping at the loop end.
    func read(into destination: UnsafeMutablePointer<Float>, frames: Int) throws(SoundscapeDecodeError) {
        precondition(!isLent, "read from a voice whose reader is lent out")
        adoptFinishedBuild()
        var done = 0
        if let reader {
            do {
                try reader.read(into: destination, frames: frames)
                return
            } catch {
                logger.warning(
                    "the PCM cache failed; decoding instead",
                    metadata: ["soundscape": "\(data.id)", "error": "\(error.reason)"])
                done = error.framesRead
                self.reader = nil
                decoder = try OpusLoopDecoder(data: data, position: reader.position)
            }
        }
        try decoder!.read(into: destination + done * 2, frames: frames - done)
    }

    private func adoptFinishedBuild() {
        guard let build, build.isComplete, let decoder, let cache else { return }
        self.build = nil
        guard let reader = cache.reader(for: data, position: decoder.position) else { return }
        self.reader = reader
        self.decoder = nil
    }
}
