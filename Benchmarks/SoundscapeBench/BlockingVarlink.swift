import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SoundscapeSystem

/// A varlink connection on a plain blocking socket: write a call, read up to
/// its NUL. The control-under-load probe uses it from a thread of its own, so
/// what it times is the daemon's answer and the kernel's delivery, not the
/// bench's own executor hops (a Swift task resumed through a NIO thread waits
/// for two more wake-ups, and on two cores those sat behind the bench's own
/// decoding of a 60 KB list reply for up to 4.6 ms: `perf sched timehist`).
final class BlockingVarlink: @unchecked Sendable { // used by one thread at a time
    private let descriptor: CInt
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    init(path: String) throws {
        descriptor = try UnixSocket.connect(path: path)
    }

    deinit { close(descriptor) }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `{"method": method}` and reads the reply; returns its size in bytes.
    /// Throws when the connection fails or the reply is an error.
    @discardableResult
    func call(_ method: String) throws -> Int {
        let request = Array("{\"method\":\"\(method)\"}".utf8) + [0]
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPIPE) }
            sent += n
        }
        var reply: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNRESET) }
            if let end = buffer[0..<n].firstIndex(of: 0) {
                // One call at a time: nothing follows the NUL.
                reply += buffer[0..<end]
                break
            }
            reply += buffer[0..<n]
        }
        // A successful reply starts with its parameters; an error names itself first or last.
        guard reply.starts(with: Array("{\"parameters\":".utf8)) else {
            throw Failure(description: "\(method) failed: \(String(decoding: reply.prefix(200), as: UTF8.self))")
        }
        return reply.count
    }
}
