import CSoundscapeSandbox
import Glibc
import SoundscapeCore
import SoundscapeSystem

/// Where every process for the signer is started: its instances, their lifeline
/// watchers, and its health command. It is the daemon's one thread that its own
/// hardening (`Hardening`) does not reach: made before the main thread denies
/// itself writable-and-executable memory, which every later thread inherits. A
/// spawn with a sandbox (`SignerSandbox`) runs on a fresh thread made from it,
/// which loads the sandbox's filters (on itself only) and then spawns, so the
/// child has those and nothing of the daemon's own.
///
/// It runs nothing but spawns: a child is started, and its parent thread's work is
/// done (a child is reaped by any thread of the process, `Reaper`). So the only code
/// outside the daemon's W^X filter is `posix_spawn` and its setup, and the spawns
/// never wait on the event loop (a cold exec can block for the disk).
public final class SignerSpawner: Sendable {
    private let thread: WorkerThread?
    /// Whether writable-and-executable memory was denied before the daemon hardened
    /// itself (a unit with `MemoryDenyWriteExecute=yes`): the signer cannot escape that.
    public let writeExecuteDeniedFromOutside: Bool

    /// Call on the main thread before any other thread exists and before `Hardening`.
    public static func beforeHardening() -> SignerSpawner {
        SignerSpawner(thread: WorkerThread(name: "soundscaped-spw"), writeExecuteDenied: Hardening.writeExecuteDenied())
    }

    /// Spawns on the calling thread: for a process that applied no hardening of its own
    /// (the tests' daemons made without `main.swift`).
    public static let unhardened = SignerSpawner(thread: nil, writeExecuteDenied: Hardening.writeExecuteDenied())

    private init(thread: WorkerThread?, writeExecuteDenied: Bool) {
        self.thread = thread
        writeExecuteDeniedFromOutside = writeExecuteDenied
    }

    /// Runs `spawn` (which starts processes, and nothing else) on a thread with `sandbox`
    /// and none of the daemon's hardening, without blocking the caller's thread.
    func spawn<T: Sendable>(sandbox: SignerSandbox, _ spawn: @escaping @Sendable () throws -> T)
        async throws(SpawnError) -> T
    {
        let result = await withCheckedContinuation { continuation in
            schedule(sandbox: sandbox, spawn) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// `spawn`, blocking the calling thread (a thread of its own, never the event loop).
    func spawnWaiting<T: Sendable>(sandbox: SignerSandbox, _ spawn: @escaping @Sendable () throws -> T)
        throws(SpawnError) -> T
    {
        let done = Completion<Result<T, SpawnError>>()
        schedule(sandbox: sandbox, spawn) { done.finish($0) }
        return try done.wait().get()
    }

    private func schedule<T: Sendable>(
        sandbox: SignerSandbox, _ spawn: @escaping @Sendable () throws -> T,
        then finish: @escaping @Sendable (Result<T, SpawnError>) -> Void
    ) {
        let run: @Sendable () -> Result<T, SpawnError> = {
            do {
                return .success(try spawn())
            } catch let error as SpawnError {
                return .failure(error)
            } catch {
                return .failure(SpawnError("\(error)"))
            }
        }
        let job: @Sendable () -> Void = {
            guard !sandbox.isEmpty else { return finish(run()) }
            // A fresh thread loads the filters on itself: this one must stay as it is.
            // Never run here if no thread can be made: that would load the filters on the spawner itself.
            let started = BlockingThread.startIfPossible(stackSize: 256 * 1024) {
                if let problem = Self.apply(sandbox) { return finish(.failure(SpawnError(problem))) }
                finish(run())
            }
            if !started { finish(.failure(SpawnError("cannot make a thread to start the signer's process on"))) }
        }
        if let thread { thread.submit(job) } else { job() }
    }

    /// Loads `sandbox`'s filters on the calling thread; why not, if one would not load.
    private static func apply(_ sandbox: SignerSandbox) -> String? {
        if sandbox.memoryDenyWriteExecute {
            let result = scs_seccomp_deny_write_execute()
            if result != 0 { return "cannot deny the signer writable-and-executable memory: \(String(cString: strerror(-result)))" }
        }
        if let families = sandbox.addressFamilies {
            let numbers = families.map { CInt($0.number) }
            let result = numbers.withUnsafeBufferPointer { scs_seccomp_allow_address_families($0.baseAddress, CInt($0.count)) }
            if result != 0 { return "cannot restrict the signer's address families: \(String(cString: strerror(-result)))" }
        }
        return nil
    }
}

/// One value handed from one thread to another that blocks for it.
/// (The semaphore orders the write of `value` before its read.)
private final class Completion<Value: Sendable>: @unchecked Sendable {
    private var value: Value?
    /// Allocated, so its address never moves.
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(semaphore, 0, 0) }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func finish(_ value: Value) {
        self.value = value
        sem_post(semaphore)
    }

    func wait() -> Value {
        while sem_wait(semaphore) != 0 {}
        return value!
    }
}
