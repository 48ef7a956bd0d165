import Foundation
#if canImport(Glibc)
import Glibc
#else
#error("TestSupport's process handling is written for Linux (glibc)")
#endif

// The parts of `ChildProcess` that wait on threads of their own: its exit status and
// its output pipes.

/// Exit status guarded by a condition variable.
final class ExitState: @unchecked Sendable {
    private let condition = NSCondition()
    private var _status: ChildProcess.ExitStatus?

    var status: ChildProcess.ExitStatus? {
        condition.lock()
        defer { condition.unlock() }
        return _status
    }

    func markExited(_ status: ChildProcess.ExitStatus) {
        condition.lock()
        _status = status
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeout: Duration) -> ChildProcess.ExitStatus? {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout.inSeconds))
        condition.lock()
        defer { condition.unlock() }
        while _status == nil {
            if !condition.wait(until: deadline) { break }
        }
        return _status
    }
}

/// Drains one pipe on a dedicated thread. Keeps all bytes (for `text`) and a
/// queue of complete lines (for `nextLine`).
///
/// The reader does not rely on EOF alone: if some other process inherited the
/// write end, EOF would never come. Once the child has exited, the pipe is
/// drained of whatever is buffered and the stream is then considered finished.
final class OutputCollector: @unchecked Sendable {
    private let fd: Int32
    private let condition = NSCondition()
    private var data = Data()
    private var partial: [UInt8] = []
    private var lines: [String] = []
    private var lineIndex = 0
    private var _finished = false
    private var exited = false

    init(fd: Int32) {
        self.fd = fd
    }

    func startReading(name: String) {
        let thread = Thread { [self] in self.readLoop() }
        thread.name = "ChildProcess-output-\(name)"
        thread.start()
    }

    func processExited() {
        condition.lock()
        exited = true
        condition.unlock()
    }

    private var hasExited: Bool {
        condition.lock()
        defer { condition.unlock() }
        return exited
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var draining = false
        loop: while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, draining ? 0 : 100)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 {
                if draining { break }
                if hasExited { draining = true }
                continue
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break loop
            }
            if n == 0 { break }  // EOF
            append(buffer[0..<n])
        }
        close(fd)
        condition.lock()
        if !partial.isEmpty {
            lines.append(Self.decode(partial))
            partial.removeAll()
        }
        _finished = true
        condition.broadcast()
        condition.unlock()
    }

    private static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var s = String(decoding: bytes, as: UTF8.self)
        if s.hasSuffix("\r") { s.removeLast() }
        return s
    }

    private func append(_ chunk: ArraySlice<UInt8>) {
        condition.lock()
        data.append(contentsOf: chunk)
        let scanFrom = partial.count
        partial.append(contentsOf: chunk)
        var lineStart = 0
        var searchFrom = scanFrom
        while let nl = partial[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(Self.decode(partial[lineStart..<nl]))
            lineStart = nl + 1
            searchFrom = lineStart
        }
        if lineStart > 0 {
            partial.removeFirst(lineStart)
            condition.broadcast()
        }
        condition.unlock()
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    var finished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return _finished && lineIndex >= lines.count
    }

    func nextLine(timeout: Duration) -> String? {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout.inSeconds))
        condition.lock()
        defer { condition.unlock() }
        while lineIndex >= lines.count {
            if _finished { return nil }
            if !condition.wait(until: deadline) {
                if lineIndex < lines.count { break }
                return nil
            }
        }
        let line = lines[lineIndex]
        lineIndex += 1
        if lineIndex > 1024 && lineIndex * 2 > lines.count {
            lines.removeFirst(lineIndex)
            lineIndex = 0
        }
        return line
    }

    func waitFinished(until deadline: ContinuousClock.Instant) {
        let remaining = deadline - ContinuousClock.now
        let date = Date(timeIntervalSinceNow: max(0, remaining.inSeconds))
        condition.lock()
        defer { condition.unlock() }
        while !_finished {
            if !condition.wait(until: date) { break }
        }
    }
}
