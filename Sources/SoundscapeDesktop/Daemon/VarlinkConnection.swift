import FoundationEssentials
import SoundscapeSystem

/// One varlink connection to the daemon, for a single-threaded poll loop:
/// non-blocking, replies matched to calls in order (varlink answers the calls of
/// one connection in the order they came). The bytes and their NUL framing are
/// `FramedSocket`'s.
///
/// The protocol is ours (README.md, "The control socket") and tiny; the companion speaks it
/// here rather than through the daemon's NIO-based client so that it needs no
/// event-loop threads and wakes only when a byte arrives.
final class VarlinkConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// An error reply's `reason` parameter, when it has one (`NotConfigured`'s names the line).
        var reason: String?
    }

    /// A reply: the raw JSON object's bytes, or the error's name.
    typealias Completion = (Result<[UInt8], Failure>) -> Void

    private let socket: FramedSocket
    private var pending: [(more: Bool, completion: Completion)] = []
    private(set) var isOpen = true

    /// The most a single reply may hold (a list of thousands of soundscapes fits easily).
    static let replyLimit = 8 << 20

    /// Connects at once (a socket-activated daemon's socket always accepts).
    init(path: String) throws(Failure) {
        do {
            socket = try FramedSocket(path: path, limit: Self.replyLimit)
        } catch {
            throw Failure(description: error.description)
        }
        socket.setNonBlocking()
    }

    var fd: Int32 { socket.descriptor }

    var wantsWrite: Bool { socket.wantsWrite }

    /// Sends a call; `completion` runs for each reply (once, or per reply with `more`).
    func call(_ method: String, parameters: String = "{}", more: Bool = false, completion: @escaping Completion) {
        guard isOpen else {
            completion(.failure(Failure(description: "not connected")))
            return
        }
        let message =
            "{\"method\":\"io.soundscaped.Player.\(method)\",\"parameters\":\(parameters)"
            + (more ? ",\"more\":true}" : "}")
        socket.queueMessage(message.utf8)
        pending.append((more, completion))
        flush()
    }

    /// Writes what is queued, as far as the socket takes it.
    func flush() {
        guard isOpen else { return }
        do {
            try socket.flush()
        } catch {
            fail("the daemon closed the connection")
        }
    }

    /// Reads what arrived and completes the calls it answers; false once closed.
    @discardableResult
    func readAvailable() -> Bool {
        guard isOpen else { return false }
        var messages: [[UInt8]] = []
        var ended: FramedSocket.Failure?
        do {
            try socket.receiveAvailable(into: &messages)
        } catch {
            ended = error
        }
        for message in messages { deliver(message) }
        switch ended {
        case nil: break
        case .closed?: fail("the daemon closed the connection")
        case .tooLong(let limit)?: fail("a reply exceeded \(limit) bytes")
        case let other?: fail(other.description)
        }
        return isOpen
    }

    private func deliver(_ message: [UInt8]) {
        guard isOpen, !pending.isEmpty else { return }
        let reply = VarlinkReply(message)
        let entry = pending[0]
        if !(entry.more && reply.continues == true) { pending.removeFirst() }
        if let error = reply.error {
            entry.completion(.failure(Failure(description: error, reason: reply.parameters?.reason)))
        } else {
            entry.completion(.success(message))
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
    struct Parameters: Decodable {
        var reason: String?
    }

    var continues: Bool?
    var error: String?
    var parameters: Parameters?

    init(_ bytes: [UInt8]) {
        self =
            (try? JSONDecoder().decode(VarlinkReply.self, from: Data(bytes)))
            ?? VarlinkReply(continues: nil, error: "org.varlink.service.InvalidReply")
    }

    private init(continues: Bool?, error: String?) {
        self.continues = continues
        self.error = error
    }
}
