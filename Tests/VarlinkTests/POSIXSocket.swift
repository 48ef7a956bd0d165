import SoundscapeSystem
#if canImport(Glibc)
import Glibc
#endif

/// Plain socket calls, for the situations a well-behaved client never creates.
enum POSIXSocket {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// Connected, with send and receive timeouts so that no test can block for long.
    static func connected(to path: String) throws -> Int32 {
        let descriptor = try UnixSocket.connect(path: path)
        UnixSocket.setTimeouts(descriptor, send: .seconds(3), receive: .seconds(3))
        return descriptor
    }
}
