import FoundationEssentials
import Glibc
import SoundscapeSystem

/// One varlink connection to the daemon, for a single-threaded poll loop:
/// non-blocking, messages framed by NUL bytes, replies matched to calls in
/// order (varlink answers the calls of one connection in the order they came).
///
/// The protocol is ours (docs/protocol.md) and tiny; the companion speaks it
/// here rather than through the daemon's NIO-based client so that it needs no
/// event-loop threads and wakes only when a byte arrives.
final class VarlinkConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A reply: the raw JSON object's bytes, or the error's name.
    typealias Completion = (Result<[UInt8], Failure>) -> Void

    let fd: Int32
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var pending: [(more: Bool, completion: Completion)] = []
    private(set) var isOpen = true

    /// The most a single reply may hold (a list of thousands of soundscapes fits easily).
    static let replyLimit = 8 << 20

    /// Connects at once (a socket-activated daemon's socket always accepts).
    init(path: String) throws(Failure) {
        let fd: CInt
        do { fd = try UnixSocket.connect(path: path) } catch { throw Failure(description: error.description) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    var wantsWrite: Bool { !output.isEmpty }

    /// Sends a call; `completion` runs for each reply (once, or per reply with `more`).
    func call(_ method: String, parameters: String = "{}", more: Bool = false, completion: @escaping Completion) {
        guard isOpen else {
            completion(.failure(Failure(description: "not connected")))
            return
        }
        let message = "{\"method\":\"io.soundscaped.Player.\(method)\",\"parameters\":\(parameters)"
            + (more ? ",\"more\":true}" : "}")
        output += Array(message.utf8) + [0]
        pending.append((more, completion))
        flush()
    }

    /// Writes what is queued, as far as the socket takes it.
    func flush() {
        while isOpen, !output.isEmpty {
            let written = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                output.removeFirst(written)
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                fail("the daemon closed the connection")
                return
            }
        }
    }

    /// Reads what arrived and completes the calls it answers; false once closed.
    @discardableResult
    func readAvailable() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while isOpen {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                input += buffer[0..<count]
                deliver()
                if input.count > Self.replyLimit { fail("a reply exceeded \(Self.replyLimit) bytes") }
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                break
            } else {
                fail(count == 0 ? "the daemon closed the connection" : String(cString: strerror(errno)))
            }
        }
        return isOpen
    }

    private func deliver() {
        while let end = input.firstIndex(of: 0) {
            let message = Array(input[..<end])
            input.removeFirst(end + 1)
            guard !pending.isEmpty else { continue }
            let reply = VarlinkReply(message)
            let entry = pending[0]
            if !(entry.more && reply.continues == true) { pending.removeFirst() }
            if let error = reply.error {
                entry.completion(.failure(Failure(description: error)))
            } else {
                entry.completion(.success(message))
            }
        }
    }

    private func fail(_ reason: String) {
        guard isOpen else { return }
        isOpen = false
        let waiting = pending
        pending.removeAll()
        for entry in waiting { entry.completion(.failure(Failure(description: reason))) }
    }
}

/// The envelope of a reply: whether more follow, and the error's name if it is one.
/// The parameters are decoded by whoever made the call.
struct VarlinkReply: Decodable {
    var continues: Bool?
    var error: String?

    init(_ bytes: [UInt8]) {
        self = (try? JSONDecoder().decode(VarlinkReply.self, from: Data(bytes)))
            ?? VarlinkReply(continues: nil, error: "org.varlink.service.InvalidReply")
    }

    private init(continues: Bool?, error: String?) {
        self.continues = continues
        self.error = error
    }
}
