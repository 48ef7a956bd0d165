import CSoundscapeSystem
import Glibc
import Logging
import SoundscapeCore
import Synchronization
import SoundscapeSystem

/// Decoded loops on disk (`$XDG_CACHE_HOME/soundscaped/pcm`), so that a loop
/// that plays for hours is decoded once instead of once per pass: afterwards
/// a refill is a `pread` from the page cache, which costs a small fraction of
/// an Opus decode. The files hold float samples exactly as the decoder gave
/// them, so playing from the cache is sample-identical to decoding.
///
/// Reading a file this way adds nothing to our resident memory (page cache is
/// not ours), unlike keeping the decoded loop in RAM (27 MB for 70 s).
///
/// File layout: a 32-byte header (magic, frame count, fingerprint of the
/// compressed file, all little-endian), then interleaved stereo Float32.
///
/// The cache has a disk budget (`budgetBytes`, 23 MB per minute of loop): the
/// least recently played files make room for a new one, and a loop that would
/// not fit at all, or not leave the file system its reserve, is never written;
/// it plays by decoding, as before the cache existed. A write that fails (the
/// disk filled meanwhile) removes its partial file; the voice keeps decoding.
public final class PCMCache: Sendable {
    static let magic: UInt64 = 0x3130_4d43_5053_4353  // "SCSPCM01"
    static let headerBytes = 32
    static let bytesPerFrame = 8
    /// The default budget: the built-in loops many times over, a 20-minute user
    /// recording, not a 10-hour one (14 GB decoded).
    public static let defaultBudgetBytes = Int64(Settings.cacheSize.defaultValue) << 20
    /// Free space a build leaves the file system at least: 5 % of it, and 16 MiB.
    static func reserve(ofFileSystemBytes total: Int64) -> Int64 { max(total / 20, 16 << 20) }

    public let directory: String
    /// Bytes all cache files together may take (a reload may change it).
    public var budgetBytes: Int64 { budget.load(ordering: .relaxed) }
    private let budget: Atomic<Int64>
    private let logger: Logger
    /// Paths being built right now, so a soundscape played twice builds once.
    private let building = Mutex<Set<String>>([])
    /// How a build thread gives way; nil keeps the creating thread's policy.
    private let buildPolicy: WorkerThread.Policy?

    /// Builds run under `buildPolicy`: `SCHED_IDLE` in the daemon, since a
    /// build is only an optimisation (the loop decodes as it plays until the
    /// file is in place). Tests of what a build writes pass nil: under
    /// `SCHED_IDLE` a build on a machine busy with other work waits for CPU
    /// without bound, and what they check does not depend on when it runs.
    public init(
        directory: String, budgetBytes: Int64 = PCMCache.defaultBudgetBytes,
        buildPolicy: WorkerThread.Policy? = .idle, logger: Logger
    ) {
        self.directory = directory
        budget = Atomic(budgetBytes)
        self.buildPolicy = buildPolicy
        self.logger = logger
    }

    func setBudget(bytes: Int64) {
        budget.store(bytes, ordering: .relaxed)
    }

    /// The size of `data`'s cache file.
    static func fileBytes(for data: SoundscapeData) -> Int64 {
        Int64(headerBytes) + data.frames * Int64(bytesPerFrame)
    }

    func path(for data: SoundscapeData) -> String {
        let hex = String(data.fingerprint, radix: 16)
        return "\(directory)/\(data.id.rawValue)-\(String(repeating: "0", count: 16 - hex.count))\(hex).f32"
    }

    /// The cached loop of `data`, positioned at `position`, or nil when there
    /// is none (or it is damaged: then it is removed and built again).
    func reader(for data: SoundscapeData, position: Int64 = 0) -> PCMLoopReader? {
        let path = path(for: data)
        // No access-time updates from the data thread's reads (see `readWithoutWaiting`);
        // only the owner may ask, and a file someone else put here is read all the same.
        var descriptor = scs_open_read_noatime(path)
        if descriptor < 0 && errno == EPERM { descriptor = open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        if let reader = PCMLoopReader(descriptor: descriptor, data: data, position: position) {
            // Played now: the last file to make room for another (the budget goes by modification time).
            _ = futimens(descriptor, nil)
            return reader
        }
        close(descriptor)
        logger.notice("removing a damaged PCM cache file", metadata: ["path": "\(path)"])
        unlink(path)
        return nil
    }

    /// Decodes `data` once into the cache on a background thread (at idle
    /// priority in the daemon); `build.isComplete` turns true when the file is in place.
    /// Returns nil when the same loop is already being built.
    func build(_ data: SoundscapeData) -> PCMCacheBuild? {
        let path = path(for: data)
        let size = Self.fileBytes(for: data)
        guard size <= budgetBytes else {
            logger.notice(
                "the decoded loop would not fit the cache budget; decoding as it plays",
                metadata: ["soundscape": "\(data.id)", "bytes": "\(size)", "budget": "\(budgetBytes)"])
            return nil
        }
        let started = building.withLock { $0.insert(path).inserted }
        guard started else { return nil }
        let build = PCMCacheBuild()
        BlockingThread.start(stackSize: 512 * 1024) { [self] in
            // Else it shows as the loop thread that started it (a new thread keeps its creator's name).
            _ = scs_set_thread_name(UInt(pthread_self()), "soundscaped-pcm")
            // In the daemon SCHED_IDLE: the build only ever uses CPU nothing else wants.
            if let buildPolicy { WorkerThread.setCallingThreadPolicy(buildPolicy) }
            let outcome = makeRoom(for: size, soundscape: data.id).map { .failure($0) } ?? write(data, to: path)
            building.withLock { _ = $0.remove(path) }
            switch outcome {
            case .success:
                logger.debug("decoded loop cached", metadata: ["soundscape": "\(data.id)", "path": "\(path)"])
                build.finish(succeeded: true)
            case .failure(let reason):
                logger.notice(
                    "cannot cache the decoded loop; decoding as it plays",
                    metadata: ["soundscape": "\(data.id)", "reason": "\(reason)"])
                build.finish(succeeded: false)
            }
        }
        return build
    }

    enum Outcome: Equatable {
        case success
        case failure(String)
    }

    /// Builds the cache file on the calling thread (what `build` does on its own).
    func write(_ data: SoundscapeData, to path: String) -> Outcome {
        if let problem = Directories.make(directory, mode: 0o700) { return .failure(problem) }
        let temporary = "\(path).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(String(cString: strerror(errno))) }
        var closed = false
        defer {
            if !closed { close(descriptor) }
            unlink(temporary)
        }
        let decoder: OpusLoopDecoder
        do { decoder = try OpusLoopDecoder(data: data) } catch { return .failure(error.reason) }

        var header = [UInt64](repeating: 0, count: Self.headerBytes / 8)
        header[0] = Self.magic.littleEndian
        header[1] = UInt64(data.frames).littleEndian
        header[2] = data.fingerprint.littleEndian
        guard header.withUnsafeBytes({ FileSystem.writeAll(descriptor, $0) }) else {
            return .failure(String(cString: strerror(errno)))
        }
        let chunkFrames = 16_384
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames * 2)
        defer { chunk.deallocate() }
        var done: Int64 = 0
        while done < data.frames {
            let frames = Int(min(Int64(chunkFrames), data.frames - done))
            do { try decoder.read(into: chunk, frames: frames) } catch { return .failure(error.reason) }
            guard FileSystem.writeAll(descriptor, UnsafeRawBufferPointer(start: chunk, count: frames * Self.bytesPerFrame)) else {
                return .failure(String(cString: strerror(errno)))
            }
            done += Int64(frames)
        }
        // The decoder wrapped early if the stream is shorter than its header says.
        guard decoder.position == data.frames else { return .failure("the stream is shorter than it says") }
        // Durable before it becomes visible: a crash must never leave a file of the right size with holes.
        guard fdatasync(descriptor) == 0 else { return .failure(String(cString: strerror(errno))) }
        closed = true
        guard close(descriptor) == 0, rename(temporary, path) == 0 else {
            return .failure(String(cString: strerror(errno)))
        }
        return .success
    }

    /// Removes other versions of `soundscape`, then the least recently played
    /// files until `size` more bytes fit the budget; nil when they do and the
    /// file system keeps its reserve, else why not.
    func makeRoom(for size: Int64, soundscape: SoundscapeID) -> String? {
        if let problem = Directories.make(directory, mode: 0o700) { return problem }
        var files: [(path: String, bytes: Int64, used: Int)] = []
        for name in FileSystem.entries(of: directory) ?? [] {
            let path = "\(directory)/\(name)"
            guard name.hasSuffix(".f32") else {
                // A partial file a crashed build left behind counts against nothing: remove it.
                if name.contains(".f32.tmp-") && !building.withLock({ $0.contains { path.hasPrefix($0) } }) { unlink(path) }
                continue
            }
            if name.hasPrefix("\(soundscape.rawValue)-"), name.count == soundscape.rawValue.count + 1 + 16 + 4 {
                unlink(path)
                continue
            }
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            files.append((path, Int64(info.st_size), info.st_mtim.tv_sec))
        }
        var total = files.reduce(0) { $0 + $1.bytes }
        for file in files.sorted(by: { $0.used < $1.used }) where total + size > budgetBytes {
            unlink(file.path)
            total -= file.bytes
        }
        var space = statvfs()
        guard statvfs(directory, &space) == 0 else { return nil }
        let free = Int64(space.f_bavail) * Int64(space.f_frsize)
        let reserve = Self.reserve(ofFileSystemBytes: Int64(space.f_blocks) * Int64(space.f_frsize))
        guard free - size >= reserve else {
            return "the disk would be left with less than \(reserve >> 20) MiB free (\(free >> 20) MiB free, the loop needs \(size >> 20) MiB)"
        }
        return nil
    }
}

/// A cache file being written; the voice that asked for it switches over on
/// its next refill once `isComplete` says so (a lock-free check).
final class PCMCacheBuild: @unchecked Sendable {
    private static let running: UInt8 = 0, succeeded: UInt8 = 1, failed: UInt8 = 2
    private let state = Atomic<UInt8>(PCMCacheBuild.running)
    private var finished = sem_t()

    init() {
        sem_init(&finished, 0, 0)
    }

    deinit {
        sem_destroy(&finished)
    }

    /// The file is in place.
    var isComplete: Bool { state.load(ordering: .acquiring) == Self.succeeded }

    fileprivate func finish(succeeded: Bool) {
        state.store(succeeded ? Self.succeeded : Self.failed, ordering: .releasing)
        sem_post(&finished)
    }

    /// Blocks until the build ends (for tests); returns whether the file is in place.
    func wait(timeout: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(timeout.inNanoseconds())
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while sem_timedwait(&finished, &deadline) != 0 {
            guard errno == EINTR else { return false }
        }
        sem_post(&finished)
        return isComplete
    }
}

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
