import Foundation
import SoundscapeSystem

/// A client that speaks bytes rather than varlink, to send what ``VarlinkClient`` never
/// would: a blocking `FramedSocket`, whose send and receive timeouts (3 s) bound every call.
///
/// Each blocking call runs on a thread of its own: not on the Swift concurrency pool,
/// which the server under test needs, and not on Dispatch's pool, which on Linux runs
/// only as many blocked calls at once as there are CPUs.
final class RawConnection: Sendable {
    private let socket: FramedSocket

    init(path: String) throws {
        socket = try FramedSocket(path: path, timeout: .seconds(3))
    }

    /// Hangs up, as a client does when it exits.
    func close() {
        socket.close()
    }

    /// Sends `text` as is; add "\0" to end a message.
    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) async throws {
        try await Self.blocking { [socket] in try socket.send(bytes) }
    }

    /// The next message, without its NUL.
    func receiveMessage() async throws -> String {
        guard let message = try await Self.blocking({ [socket] in try socket.receiveMessage() }) else {
            throw FramedSocket.Failure.closed
        }
        return String(decoding: message, as: UTF8.self)
    }

    /// Waits for the server to close the connection (orderly or by reset), discarding
    /// anything still sent.
    func receiveClose() async throws {
        try await Self.blocking { [socket] in
            while try socket.receiveMessage() != nil {}
        }
    }

    /// Closes the sending side only: the server sees end-of-input but can still reply.
    func shutdownSending() {
        socket.shutdownSending()
    }

    private static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
