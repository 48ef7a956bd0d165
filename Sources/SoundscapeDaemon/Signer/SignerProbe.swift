import CSoundscapeSystem
import Glibc
import SoundscapeCore
import SoundscapeSystem
import Synchronization

/// One run of `signer-health-command`, on a thread of its own (spawning and waiting
/// never happen on the event loop). Its exit status means what
/// `signer-health-exit-codes` says (`SignerHealthExitCodes`).
///
/// The command starts in a process group of its own with stdin on /dev/null. Its
/// first stdout line is kept (the signer's status line when it passes), and the first
/// stderr line (the reason when it fails). At the deadline its whole group is killed
/// and the run has failed; when it ends in time, whatever it left running in its group
/// (a background job) is killed too. A `pidfd` gives the wait its deadline even when
/// the command closed its output and went on running.
enum SignerProbe {
    /// Bytes of each output kept while looking for its first line; the rest is read and dropped.
    static let keptBytes = 4096

    /// What stops a probe before its timeout: its owner no longer wants the answer (the
    /// instance it checks is over). The command's run polls a pipe that becomes readable
    /// (made on first use, so the HTTP check, which closes its channel instead, makes
    /// none); a cancel that comes before the run, or after it, is harmless.
    final class Cancellation: Sendable {
        private struct State {
            var cancelled = false
            var pipe: (read: Int32, write: Int32)?
            var handlers: [@Sendable () -> Void] = []
        }
        private let state = Mutex(State())

        init() {}

        deinit {
            state.withLock { state in
                if let pipe = state.pipe {
                    close(pipe.read)
                    close(pipe.write)
                }
            }
        }

        /// The descriptor that becomes readable once cancelled (-1 when no pipe can be made).
        var descriptor: Int32 {
            state.withLock { state in
                if state.pipe == nil, let pipe = try? Spawn.pipe() {
                    state.pipe = pipe
                    if state.cancelled { Self.signal(pipe) }
                }
                return state.pipe?.read ?? -1
            }
        }

        /// Runs `body` once cancelled (at once if it already is), on the thread that cancels.
        func whenCancelled(_ body: @escaping @Sendable () -> Void) {
            let now = state.withLock { state in
                if !state.cancelled { state.handlers.append(body) }
                return state.cancelled
            }
            if now { body() }
        }

        func cancel() {
            let handlers = state.withLock { state -> [@Sendable () -> Void] in
                guard !state.cancelled else { return [] }
                state.cancelled = true
                if let pipe = state.pipe { Self.signal(pipe) }
                defer { state.handlers = [] }
                return state.handlers
            }
            for handler in handlers { handler() }
        }

        private static func signal(_ pipe: (read: Int32, write: Int32)) {
            var byte: UInt8 = 1
            _ = write(pipe.write, &byte, 1)
        }
    }

    /// Runs `command`; blocks until it has ended (at most about `timeout`), or `cancellation` says so.
    static func run(
        command: [String], environment: [String: String], workingDirectory: String?,
        timeout: Duration, exitCodes: SignerHealthExitCodes = .plain, cancellation: Cancellation? = nil,
        sandbox: SignerSandbox = SignerSandbox(), spawner: SignerSpawner = .unhardened
    ) -> SignerProbeResult {
        guard let program = command.first else { return .failed("the health command is empty") }
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let stdout: (read: Int32, write: Int32)
        let stderr: (read: Int32, write: Int32)
        do {
            stdout = try Spawn.pipe()
            stderr = try Spawn.pipe()
        } catch {
            return .failed(error.description)
        }
        defer {
            close(stdout.read)
            close(stderr.read)
        }
        let pid: pid_t
        do {
            defer {
                close(stdout.write)
                close(stderr.write)
            }
            // On the spawner: the signer's sandbox, not the daemon's hardening (a health check may be a JIT too).
            let stdio = [devNull, stdout.write, stderr.write]
            pid = try spawner.spawnWaiting(sandbox: sandbox) {
                try Spawn.run(
                    program: program, arguments: command, environment: environment, searchPath: true,
                    stdio: stdio, group: 0, workingDirectory: workingDirectory)
            }
        } catch {
            return .failed(error.description)
        }
        let exited = scs_pidfd_open(pid)
        defer { if exited >= 0 { close(exited) } }

        var output = Capture()
        var errors = Capture()
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        var cancelled = false
        var open = [stdout.read, stderr.read]
        let cancelDescriptor = cancellation?.descriptor ?? -1
        while true {
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                timedOut = true
                break
            }
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            descriptors.append(pollfd(fd: cancelDescriptor, events: Int16(POLLIN), revents: 0))
            if exited >= 0 { descriptors.append(pollfd(fd: exited, events: Int16(POLLIN), revents: 0)) }
            // Without a pidfd (a kernel before 5.3) the end of its output stands for its end.
            if exited < 0, open.isEmpty { break }
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: left.inMilliseconds(rounded: .up)))
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if exited >= 0, descriptors.last!.revents != 0 { break }
            // (poll ignores a negative descriptor: without a cancellation this never fires.)
            if descriptors[open.count].revents != 0 {
                cancelled = true
                break
            }
            for (index, fd) in open.enumerated().reversed() where descriptors[index].revents != 0 {
                let more = fd == stdout.read ? output.read(fd) : errors.read(fd)
                if !more { open.remove(at: index) }
            }
        }
        // Its group goes, leftovers and all; `pid` is not reaped yet, so the group id is still ours.
        kill(-pid, SIGKILL)
        let status = Reaper.wait(for: pid)
        // What it wrote just before ending is still in the pipes.
        for fd in open {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var reads = 0
            while reads < 16, fd == stdout.read ? output.read(fd) : errors.read(fd) { reads += 1 }
        }
        if timedOut {
            return .failed("no answer within \(SignerMachine.seconds(timeout)) s (killed)")
        }
        if cancelled {
            return .failed("cancelled: the instance it checked is over (killed)")
        }
        return exitCodes.result(status, stdout: output.firstLine, stderr: errors.firstLine)
    }

    /// The start of one output stream.
    struct Capture {
        private var bytes: [UInt8] = []

        /// Reads what is there; false at the end of the stream (or an error).
        mutating func read(_ fd: Int32) -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got > 0 {
                if bytes.count < SignerProbe.keptBytes { bytes += chunk[..<min(got, SignerProbe.keptBytes - bytes.count)] }
                return true
            }
            return got < 0 && errno == EINTR
        }

        /// Its first non-empty line, as status shows a line.
        var firstLine: String? {
            let text = String(decoding: bytes, as: UTF8.self)
            for line in text.split(whereSeparator: \.isNewline) {
                if let clean = SignerStatus.line(line) { return clean }
            }
            return nil
        }
    }
}
