import Foundation
import SoundscapeSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately dumb varlink client on a blocking Unix socket: it sends
/// whatever bytes a test gives it, including garbage a real client never would.
final class RawVarlink {
    private let fd: Int32

    init(path: String) throws {
        fd = try UnixSocket.connect(path: path)
        UnixSocket.setTimeouts(fd, send: nil, receive: .seconds(5))
    }

    private var owned = true

    deinit {
        if owned { close(fd) }
    }

    /// Hands the socket over to the caller, who closes it.
    func detach() -> Int32 {
        owned = false
        return fd
    }

    /// Sends raw bytes (add the NUL yourself when you want a frame).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw HarnessError("send: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends a frame unless the socket's buffer is full (the peer stopped
    /// reading); returns whether it went out. For clients that never read.
    func sendIfRoom(_ text: String) throws -> Bool {
        let bytes = Array(text.utf8) + [0]
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
        guard sent == bytes.count else { throw HarnessError("send: \(sent) of \(bytes.count) bytes, errno \(errno)") }
        return true
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8) + [0])
    }

    /// The next NUL-terminated reply as a JSON object, or nil when the server closed the connection.
    func receive() throws -> [String: Any]? {
        var message: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let got = recv(fd, &byte, 1, 0)
            if got == 0 { return nil }
            guard got == 1 else { throw HarnessError("recv: errno \(errno) (timed out waiting for a reply?)") }
            if byte == 0 { break }
            message.append(byte)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else {
            throw HarnessError("reply is not a JSON object: \(String(decoding: message, as: UTF8.self))")
        }
        return object
    }

    /// Sends one call and returns its reply.
    func call(_ json: String) throws -> [String: Any] {
        try send(json)
        guard let reply = try receive() else { throw HarnessError("connection closed instead of a reply to \(json)") }
        return reply
    }
}

extension [String: Any] {
    var errorName: String? { self["error"] as? String }
    var errorParameter: String? { (self["parameters"] as? [String: Any])?["parameter"] as? String }
}
