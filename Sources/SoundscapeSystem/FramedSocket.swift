import Glibc
import Synchronization

/// A Unix stream socket that carries NUL-framed messages (varlink's framing),
/// on plain system calls: for the clients that run no NIO event loop. The
/// daemon's own clients and server use NIO (`VarlinkClient`, `VarlinkServer`).
///
/// Two ways to use it, never both on one socket:
/// - blocking (`sendMessage`, `receiveMessage`): the benchmark's probe, which
///   times the daemon rather than an executor's hops, and the tests' raw clients,
///   which send what a real client never would;
/// - non-blocking on a poll loop (`queueMessage`, `flush`, `receiveAvailable`):
///   the desktop companion, which wakes only when a byte arrives.
///
/// Calls are serialised: a second caller waits for the first one's system call.
public final class FramedSocket: Sendable {
    public enum Failure: Error, CustomStringConvertible, Equatable {
        /// The peer closed the connection (or reset it), or `close()` was called.
        case closed
        /// A blocking call waited longer than the socket's timeout.
        case timedOut(String)
        /// A message grew past the limit before its NUL arrived.
        case tooLong(limit: Int)
        /// A system call failed with `errno`.
        case system(String, errno: Int32)

        public var description: String {
            switch self {
            case .closed: "the connection is closed"
            case .timedOut(let call): "\(call) timed out"
            case .tooLong(let limit): "a message exceeded \(limit) bytes"
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Room for one message by default (a list of thousands of soundscapes fits easily).
    public static let defaultLimit = 8 << 20

    public let descriptor: CInt

    private struct State {
        var frames: NULFrames
        /// Framed messages queued by `queueMessage`, not sent yet.
        var output: [UInt8] = []
        /// What `recv` reads into, made on the first read.
        var chunk: [UInt8] = []
        /// Whether `descriptor` is still ours and open.
        var open = true
    }

    private let state: Mutex<State>

    /// Takes over `descriptor`, a connected stream socket; closes it at the end.
    public init(descriptor: CInt, limit: Int = FramedSocket.defaultLimit) {
        self.descriptor = descriptor
        state = Mutex(State(frames: NULFrames(limit: limit)))
    }

    /// Connects to the socket at `path`. With a `timeout`, no blocking send or
    /// receive waits longer (it fails with `timedOut`).
    public convenience init(path: String, timeout: Duration? = nil, limit: Int = FramedSocket.defaultLimit)
        throws(UnixSocket.Failure)
    {
        let fd = try UnixSocket.connect(path: path)
        if let timeout { UnixSocket.setTimeouts(fd, send: timeout, receive: timeout) }
        self.init(descriptor: fd, limit: limit)
    }

    deinit {
        state.withLock { if $0.open { Glibc.close(descriptor) } }
    }

    /// Closes the socket now, as a client does when it exits.
    public func close() {
        state.withLock { state in
            guard state.open else { return }
            state.open = false
            Glibc.close(descriptor)
        }
    }

    /// Hands the descriptor over to the caller, who closes it; bytes received and
    /// not yet handed out stay behind.
    public func detach() -> CInt {
        state.withLock { $0.open = false }
        return descriptor
    }

    /// Closes the sending side only: the peer sees the end of input and can still reply.
    public func shutdownSending() {
        state.withLock { state in
            if state.open { shutdown(descriptor, Int32(SHUT_WR)) }
        }
    }

    // MARK: Blocking

    /// Sends `bytes` as they are (a test's raw bytes; add the NUL to end a message).
    public func send(_ bytes: [UInt8]) throws(Failure) {
        try state.withLock { (state) throws(Failure) in
            guard state.open else { throw .closed }
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { throw Self.failure("send") }
                offset += sent
            }
        }
    }

    /// Sends `message` and its NUL.
    public func sendMessage(_ message: String) throws(Failure) {
        try send(NULFrames.frame(message.utf8))
    }

    /// Sends `message` and its NUL unless the socket's buffer is full (the peer
    /// stopped reading); returns whether it went out. For clients that never read.
    public func sendMessageIfRoom(_ message: String) throws(Failure) -> Bool {
        let bytes = NULFrames.frame(message.utf8)
        return try state.withLock { (state) throws(Failure) -> Bool in
            guard state.open else { throw .closed }
            let sent = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
            guard sent >= 0 else { throw Self.failure("send") }
            guard sent == bytes.count else { throw .system("send: \(sent) of \(bytes.count) bytes", errno: EAGAIN) }
            return true
        }
    }

    /// The next message, without its NUL; nil once the peer has closed the connection.
    public func receiveMessage() throws(Failure) -> [UInt8]? {
        try state.withLock { (state) throws(Failure) -> [UInt8]? in
            while true {
                if let message = state.frames.next() { return message }
                guard !state.frames.isOverLimit else { throw .tooLong(limit: state.frames.limit) }
                switch try read(into: &state) {
                case .bytes: continue
                case .end: return nil
                case .nothing: throw .timedOut("recv")
                }
            }
        }
    }

    /// Sends `message` and returns the next message received: a call's reply.
    public func call(_ message: String) throws(Failure) -> [UInt8] {
        try sendMessage(message)
        guard let reply = try receiveMessage() else { throw .closed }
        return reply
    }

    // MARK: On a poll loop (a non-blocking descriptor)

    /// Makes the descriptor non-blocking, for `flush` and `receiveAvailable`.
    public func setNonBlocking() {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Queues `message` and its NUL; `flush` sends it.
    public func queueMessage(_ message: some Sequence<UInt8>) {
        state.withLock { $0.output += NULFrames.frame(message) }
    }

    /// Whether queued bytes wait for the socket to take them (poll for `POLLOUT`).
    public var wantsWrite: Bool {
        state.withLock { !$0.output.isEmpty }
    }

    /// Sends what is queued, as far as the socket takes it.
    public func flush() throws(Failure) {
        try state.withLock { (state) throws(Failure) in
            guard state.open else { throw .closed }
            while !state.output.isEmpty {
                let sent = state.output.withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent > 0 {
                    state.output.removeFirst(sent)
                } else if sent < 0 && errno == EINTR {
                    continue
                } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    return
                } else {
                    throw Self.failure("send")
                }
            }
        }
    }

    /// Reads what has arrived, adding each whole message to `messages`; returns when
    /// the socket has no more for now. Throws once the connection is over (the
    /// messages that came before its end are in `messages`).
    public func receiveAvailable(into messages: inout [[UInt8]]) throws(Failure) {
        try state.withLock { (state) throws(Failure) in
            while true {
                switch try read(into: &state) {
                case .bytes: break
                case .end: throw .closed
                case .nothing: return
                }
                while let message = state.frames.next() { messages.append(message) }
                guard !state.frames.isOverLimit else { throw .tooLong(limit: state.frames.limit) }
            }
        }
    }

    // MARK: Reading

    private enum Read { case bytes, end, nothing }

    /// One `recv` into the frames: `.bytes`, the `.end` of the stream (or a reset),
    /// or `.nothing` (a non-blocking socket with nothing queued, or a timeout).
    private func read(into state: inout State) throws(Failure) -> Read {
        guard state.open else { throw .closed }
        if state.chunk.isEmpty { state.chunk = [UInt8](repeating: 0, count: 64 * 1024) }
        while true {
            let count = state.chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                state.frames.append(state.chunk[..<count])
                return .bytes
            }
            if count == 0 { return .end }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .nothing
            case ECONNRESET: return .end
            default: throw .system("recv", errno: errno)
            }
        }
    }

    private static func failure(_ call: String) -> Failure {
        switch errno {
        case EPIPE, ECONNRESET: .closed
        case EAGAIN, EWOULDBLOCK: .timedOut(call)
        default: .system(call, errno: errno)
        }
    }
}
