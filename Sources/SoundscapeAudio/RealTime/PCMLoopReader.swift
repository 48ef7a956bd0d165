import CSoundscapeSystem
import Glibc
import SoundscapeCore

/// Reads a cached loop endlessly, wrapping at its end. One thread at a time
/// owns it: the loop thread, which may block in `read`, or (lent through
/// `DataThreadRefill`) PipeWire's real-time data thread, which calls
/// `readWithoutWaiting` and nothing else. `prefetch(at:frames:)` reads no
/// state the owner changes, so the loop thread asks for pages ahead while the
/// reader is lent (`PCMReadAhead`). The descriptor is closed on the loop thread.
final class PCMLoopReader {
    private let descriptor: Int32
    /// The loop's length.
    let frames: Int64
    private(set) var position: Int64
    /// Set when the file system refused a non-blocking read: not lent again.
    private(set) var nonBlockingReadsUnsupported = false

    /// Checks the header and size against `data`; nil when they disagree.
    init?(descriptor: Int32, data: SoundscapeData, position: Int64) {
        var header = [UInt64](repeating: 0, count: PCMCache.headerBytes / 8)
        let got = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        var info = stat()
        guard got == PCMCache.headerBytes, fstat(descriptor, &info) == 0,
            UInt64(littleEndian: header[0]) == PCMCache.magic,
            Int64(UInt64(littleEndian: header[1])) == data.frames,
            UInt64(littleEndian: header[2]) == data.fingerprint,
            Int64(info.st_size) == Int64(PCMCache.headerBytes) + data.frames * Int64(PCMCache.bytesPerFrame)
        else { return nil }
        self.descriptor = descriptor
        self.frames = data.frames
        self.position = position % data.frames
        // No read-ahead of the kernel's own: what is read ahead is asked for
        // (`prefetch`, on the loop thread), and the kernel's would mark pages whose
        // later read starts more read-ahead on whichever thread reads them, the
        // real-time one included. A read that misses reads just what it asked for.
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_RANDOM)
    }

    deinit {
        close(descriptor)
    }

    /// A failed read; the frames before `framesRead` were delivered.
    struct ReadError: Error {
        let reason: String
        let framesRead: Int
    }

    /// Where frame `frame` of the loop starts in the file.
    private func fileOffset(ofFrame frame: Int64) -> off_t {
        off_t(PCMCache.headerBytes) + off_t(frame) * off_t(PCMCache.bytesPerFrame)
    }

    /// The frames readable from `position` before the loop's end (at most
    /// `limit`), and the file offset of the first.
    private func nextRun(upTo limit: Int) -> (frames: Int, offset: off_t) {
        (Int(min(Int64(limit), frames - position)), fileOffset(ofFrame: position))
    }

    private func advance(by framesRead: Int) {
        position += Int64(framesRead)
        if position == frames { position = 0 }
    }

    /// Why `readWithoutWaiting` stopped short.
    enum Shortfall {
        /// The rest is not in the page cache; a blocking read would wait for the disk.
        case wouldBlock
        /// The file system does not do non-blocking reads.
        case unsupported
        /// A real error, which a blocking `read` will meet and report.
        case failed
    }

    /// Fills up to `count` frames at `destination` from the page cache only,
    /// wrapping at the loop's end; never waits for the disk. Returns the frames
    /// delivered and, when short, why.
    ///
    /// The real-time data thread calls this and nothing else of the reader.
    /// Here it takes no lock and allocates nothing; its one system call is
    /// `preadv2(RWF_NOWAIT)` at an explicit offset on a buffered descriptor
    /// (`POSIX_FADV_RANDOM`, and `O_NOATIME` where we own the file, which is
    /// always the case for a file we wrote). What that read can still cost, on
    /// Linux 6.x (read in mm/filemap.c of 6.18):
    /// - Pages cached and up to date (steady playback: `PCMReadAhead` asked
    ///   for them seconds earlier): found under RCU and copied out, with no
    ///   sleeping lock, no allocation and no I/O. They are marked accessed
    ///   (per-CPU batches; a spinlock, never a sleep, when a batch drains).
    /// - A page still being read in: `EAGAIN` at once (`.wouldBlock`).
    /// - A page not cached at all (dropped under memory pressure, or never
    ///   asked for): before returning `EAGAIN`, the kernel starts reading the
    ///   pages asked for from this thread. It allocates page-cache pages
    ///   (reclaim without I/O, under `memalloc_noio`, but direct reclaim and
    ///   memory-cgroup charging all the same) and submits the read, which may
    ///   wait for a free request in the block layer. Bounded to this read's
    ///   pages: with `POSIX_FADV_RANDOM` the kernel adds no read-ahead and
    ///   leaves no read-ahead mark whose later hit would start more here.
    /// - The file position: none; `pread` never takes the descriptor's
    ///   `f_pos_lock`, which `read` takes on a descriptor shared by threads.
    /// - The access time: not with `O_NOATIME`. Without it, under `relatime`,
    ///   a read a day updates it, which dirties the inode; on ext4 that opens
    ///   a journal handle, which can wait for a commit.
    /// - File-system locks: ext4 and btrfs take none for a buffered read; XFS
    ///   takes its inode lock shared by trylock (`EAGAIN` under a writer). A
    ///   file system without non-blocking reads (`FMODE_NOWAIT`) refuses the
    ///   flag (`EOPNOTSUPP`): `.unsupported`, and the reader is not lent again.
    /// - Hooks of others: the LSM's permission check, and fsnotify. An
    ///   `IN_ACCESS` or `FAN_ACCESS` watch on the file allocates an event here;
    ///   a fanotify permission watch (an on-access scanner) makes the read wait
    ///   for its daemon's answer. A cache directory has none unless a user sets one.
    /// - The destination: the copy faults if a page of the ring is not
    ///   resident. The rings are written whole before they are lent, so only
    ///   swapping can take a page away; the fault then waits for the swap-in,
    ///   and on kernels without per-VMA locks (before 6.4, Debian 12's 6.1) for
    ///   the process's `mmap_lock`, which another thread's `mmap` may hold.
    func readWithoutWaiting(into destination: UnsafeMutablePointer<Float>, frames count: Int) -> (frames: Int, shortfall: Shortfall?) {
        var done = 0
        while done < count {
            let (run, offset) = nextRun(upTo: count - done)
            let got = scs_pread_nowait(descriptor, destination + done * 2, run * PCMCache.bytesPerFrame, offset)
            if got < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN: return (done, .wouldBlock)
                case EOPNOTSUPP, ENOSYS, EINVAL:
                    nonBlockingReadsUnsupported = true
                    return (done, .unsupported)
                default: return (done, .failed)
                }
            }
            // Part of a page may be cached; a partial frame is read again next time.
            let framesRead = got / PCMCache.bytesPerFrame
            guard framesRead > 0 else { return (done, got == 0 ? .failed : .wouldBlock) }
            done += framesRead
            advance(by: framesRead)
        }
        return (done, nil)
    }

    /// Asks the kernel to start reading the next `count` frames into the page
    /// cache, without waiting for them, so that `readWithoutWaiting` finds them
    /// there (`posix_fadvise(POSIX_FADV_WILLNEED)`: it allocates the pages and
    /// submits their reads, so never on the real-time thread).
    func prefetch(frames count: Int) {
        prefetch(at: position, frames: count)
    }

    /// `prefetch(frames:)` from `position`, which may lie past the loop's end
    /// (it wraps). Reads only what never changes, so the loop thread may call
    /// it while the data thread owns the reader.
    func prefetch(at position: Int64, frames count: Int) {
        var start = position % frames
        var remaining = Int64(min(Int64(count), frames))
        while remaining > 0 {
            let run = min(remaining, frames - start)
            _ = posix_fadvise(descriptor, fileOffset(ofFrame: start), off_t(run) * off_t(PCMCache.bytesPerFrame), POSIX_FADV_WILLNEED)
            remaining -= run
            start = (start + run) % frames
            if run == 0 { break }
        }
    }

    /// Fills `count` frames at `destination`, wrapping at the loop's end.
    func read(into destination: UnsafeMutablePointer<Float>, frames count: Int) throws(ReadError) {
        var done = 0
        while done < count {
            let (run, offset) = nextRun(upTo: count - done)
            let got = pread(descriptor, destination + done * 2, run * PCMCache.bytesPerFrame, offset)
            if got < 0 {
                if errno == EINTR { continue }
                throw ReadError(reason: String(cString: strerror(errno)), framesRead: done)
            }
            // A file cut short under us (someone truncated it) reads 0: fail, do not spin.
            guard got > 0, got % PCMCache.bytesPerFrame == 0 else {
                throw ReadError(reason: "the cache file is shorter than its header says", framesRead: done)
            }
            let framesRead = got / PCMCache.bytesPerFrame
            done += framesRead
            advance(by: framesRead)
        }
    }
}
