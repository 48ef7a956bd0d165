import COpusFile
import Glibc

/// One libopusfile decoder reading a file through a shared descriptor.
///
/// libopusfile reads through callbacks here; each handle keeps its own offset
/// and reads with `pread`, which never moves the descriptor's own position, so
/// any number of decoders (playback, a cache build) can share one descriptor
/// on different threads. The compressed bytes then live in the page cache,
/// not in our heap.
final class OpusFileHandle {
    let file: OpaquePointer
    private let source: UnsafeMutablePointer<Source>

    /// Where this decoder is in the file.
    struct Source {
        let descriptor: Int32
        let size: Int64
        var offset: Int64 = 0
    }

    /// Opens the stream (reading its headers); throws libopusfile's error code.
    init(descriptor: Int32, size: Int64) throws(OpusFileOpenError) {
        source = .allocate(capacity: 1)
        source.initialize(to: Source(descriptor: descriptor, size: size))
        var callbacks = OpusFileCallbacks(read: opusRead, seek: opusSeek, tell: opusTell, close: nil)
        var error: Int32 = 0
        guard let file = op_open_callbacks(source, &callbacks, nil, 0, &error) else {
            source.deallocate()
            throw OpusFileOpenError(code: error)
        }
        self.file = file
    }

    deinit {
        op_free(file)
        source.deallocate()
    }
}

struct OpusFileOpenError: Error {
    let code: Int32
}

private func source(_ stream: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<OpusFileHandle.Source> {
    stream!.assumingMemoryBound(to: OpusFileHandle.Source.self)
}

// libopusfile's callbacks: plain C function pointers, so no captures; the
// stream pointer is the handle's Source.

private let opusRead: op_read_func = { stream, buffer, count in
    let source = source(stream)
    while true {
        let got = pread(source.pointee.descriptor, buffer, Int(count), off_t(source.pointee.offset))
        if got >= 0 {
            source.pointee.offset += Int64(got)
            return Int32(got)
        }
        if errno != EINTR { return -1 }
    }
}

private let opusSeek: op_seek_func = { stream, offset, whence in
    let source = source(stream)
    let base: Int64
    switch whence {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = source.pointee.offset
    case SEEK_END: base = source.pointee.size
    default: return -1
    }
    let target = base + offset
    guard target >= 0 else { return -1 }
    source.pointee.offset = target
    return 0
}

private let opusTell: op_tell_func = { stream in
    source(stream).pointee.offset
}
