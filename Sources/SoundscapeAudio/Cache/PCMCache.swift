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
    /// Held by the build that runs: one at a time. A mix played for the first time
    /// starts a build per layer, and each holds a decoder and a chunk buffer while
    /// it runs; at once, three put the daemon's peak RSS over its 16 MiB budget
    /// (docs/performance.md, "Layers"). The others wait on their idle threads.
    private let oneBuildAtATime = Mutex<Void>(())
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
            let outcome = oneBuildAtATime.withLock { _ in
                makeRoom(for: size, soundscape: data.id).map { .failure($0) } ?? write(data, to: path)
            }
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
