#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A client that speaks bytes rather than varlink, to send what ``VarlinkClient`` never would.
///
/// Each blocking socket call runs on a thread of its own: not on the Swift concurrency pool,
/// which the server under test needs, and not on Dispatch's pool, which on Linux runs only
/// as many blocked calls at once as there are CPUs. Socket timeouts bound every call.
final class RawConnection {
    private var descriptor: Int32
    /// Bytes received beyond the last message handed out.
    private var received: [UInt8] = []

    init(path: String) throws {
        descriptor = try POSIXSocket.connected(to: path)
    }

    deinit {
        close()
    }

    /// Hangs up, as a client does when it exits.
    func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    /// Sends `text` as is; add "\0" to end a message.
    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) async throws {
        let descriptor = descriptor
        try await Self.blocking {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { sendWithoutSignal(descriptor, $0) }
                guard count > 0 else { throw POSIXSocket.Failure(operation: "send", code: errno) }
                sent += count
            }
        }
    }

    /// The next message, without its NUL.
    func receiveMessage() async throws -> String {
        while true {
            if let nul = received.firstIndex(of: 0) {
                let message = String(decoding: received[..<nul], as: UTF8.self)
                received.removeSubrange(...nul)
                return message
            }
            guard let chunk = try await receiveChunk() else {
                throw POSIXSocket.Failure(operation: "recv (connection closed)", code: 0)
            }
            received += chunk
        }
    }

    /// Waits for the server to close the connection, discarding anything still sent.
    func receiveClose() async throws {
        while try await receiveChunk() != nil {}
    }

    /// Closes the sending side only: the server sees end-of-input but can still reply.
    func shutdownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// `nil` once the peer has closed (orderly or by reset).
    private func receiveChunk() async throws -> [UInt8]? {
        let descriptor = descriptor
        return try await Self.blocking {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(buffer[..<count]) }
            if count == 0 || errno == ECONNRESET { return nil }
            throw POSIXSocket.Failure(operation: "recv", code: errno)
        }
    }

    private static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// A write to a socket the server has closed must fail, not kill the test process with SIGPIPE.
private func sendWithoutSignal(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    #if os(Linux)
    send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
    #else
    send(descriptor, bytes.baseAddress, bytes.count, 0)
    #endif
}

private func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
}
