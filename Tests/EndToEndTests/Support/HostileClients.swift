import Foundation
import SoundscapeSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One round of what a hostile (or broken) local client can do to the control
/// socket, as issue 16 measured it:
/// - 2,000 connections, half of them idle, half with a message half sent;
/// - 300 subscribers that never read, while 400 volume changes go out;
/// - 300 garbage frames, and a 64 MiB frame with no NUL.
/// Every socket is closed at the end of the round.
struct HostileRound {
    let socket: String
    var idle = 1000
    var halfSent = 1000
    var halfSentBytes = 16 * 1024
    var stuckSubscribers = 300
    var volumeChanges = 400
    var garbageFrames = 300
    var hugeFrameBytes = 64 << 20

    /// Runs the round; `during` is called while the connections are open (for a
    /// well-behaved client's measurements).
    func run(during: () throws -> Void = {}) throws {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for index in 0..<(idle + halfSent) {
            let fd = try Self.connect(socket)
            sockets.append(fd)
            if index >= idle {
                let partial = [UInt8](repeating: UInt8(ascii: "{"), count: halfSentBytes)
                _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
        }
        for _ in 0..<stuckSubscribers {
            let fd = try Self.connect(socket)
            sockets.append(fd)
            let subscribe = Array(#"{"method":"io.soundscaped.Player.Subscribe","more":true}"#.utf8) + [0]
            _ = subscribe.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let control = try FramedSocket(path: socket, timeout: .seconds(5))
        for index in 0..<volumeChanges {
            let reply = try control.call(json: #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":\#(index % 2 == 0 ? 41 : 42)}}"#)
            if let error = reply.errorName { throw HarnessError("SetVolume refused during the attack: \(error)") }
        }
        let garbage = try FramedSocket(path: socket, timeout: .seconds(5))
        for index in 0..<garbageFrames {
            _ = try? garbage.sendMessageIfRoom("not json \(index) {{{")
        }
        // The huge frame: the daemon stops reading it at its message limit and closes; the
        // rest of the writes then fail, which is expected.
        let huge = try Self.connect(socket)
        sockets.append(huge)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        var sent = 0
        while sent < hugeFrameBytes {
            let wrote = chunk.withUnsafeBytes { send(huge, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if wrote <= 0 { break }
            sent += wrote
        }
        try during()
    }

    static func connect(_ path: String) throws -> Int32 {
        let fd = try UnixSocket.connect(path: path)
        UnixSocket.setTimeouts(fd, send: .seconds(5), receive: nil)
        return fd
    }

    /// The test process needs more than the usual 1,024 descriptors.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    static func residentKilobytes(_ pid: Int32) -> Int {
        Int(ProcFS.statusFields("/proc/\(pid)/status")["VmRSS"] ?? 0)
    }
}
