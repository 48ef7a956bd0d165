import CSoundscapeSystem
import Glibc
import Logging
import SoundscapeCore
import SoundscapeSystem
import Synchronization

/// One signer instance's `NOTIFY_SOCKET`: an `AF_UNIX` datagram socket beside the
/// control socket, spoken to in the `sd_notify(3)` protocol, as systemd listens to
/// a service. libsystemd's `sd_notify`, python3-sdnotify and `systemd-notify` work
/// unchanged.
///
/// Every datagram is checked before it is believed:
/// - its sender (`SCM_CREDENTIALS`, with `SO_PASSCRED`) must be in the instance's
///   process group. A sender that has already exited cannot be placed, and is
///   dropped, as systemd drops it; `systemd-notify` waits (its barrier) until its
///   message was read, so only `--no-block` loses that race;
/// - descriptors passed with it (`SCM_RIGHTS`: `BARRIER=1`, `FDSTORE=1`) are closed
///   at once, which is what releases a barrier;
/// - a datagram over 4096 bytes (systemd's limit; `MSG_TRUNC` gives its true size),
///   one whose control data was cut (`MSG_CTRUNC`) or one with a NUL is dropped whole.
/// What is left is parsed (`SignerNotification`, pure and fuzzed) and handed on
/// merged: while the player is busy with one fact, later datagrams fold into the
/// next, so a flood costs a bounded amount of memory and one fact at a time.
///
/// Why a thread and not the event loop: NIO's datagram channel neither hands over
/// `SCM_CREDENTIALS` nor closes passed descriptors, and NIO offers no way to watch a
/// raw descriptor. The thread blocks in `recvmsg` (no wake-up while nothing is
/// sent), like the reaper's threads in `waitpid`; `close` wakes it with `shutdown`.
final class SignerNotifySocket: Sendable {
    /// The `NOTIFY_SOCKET` value the instance gets.
    let path: String
    private let descriptor: Int32
    private enum State { case open, reading, closed }
    private let state = Mutex(State.open)
    private let pending = Mutex<(notification: SignerNotification?, delivering: Bool)>((nil, false))

    /// How many descriptors one datagram may bring that we close ourselves; the kernel
    /// drops (and closes) any beyond, and says so with `MSG_CTRUNC`.
    private static let descriptorRoom = 16

    /// Binds a fresh socket at `path` (replacing a stale one a crashed daemon left).
    init(path: String) throws(SpawnError) {
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(notation: path)
        } catch {
            throw SpawnError("the signer's notify socket path is too long: \(path)")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SpawnError("cannot create the signer's notify socket: \(Self.text(errno))") }
        var on: Int32 = 1
        unlink(path)
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        guard setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size)) == 0, bound == 0 else {
            let reason = Self.text(errno)
            Glibc.close(fd)
            throw SpawnError("cannot set up the signer's notify socket \(path): \(reason)")
        }
        chmod(path, 0o600)
        self.path = path
        descriptor = fd
    }

    /// Reads on a thread of its own until `close`; what the group `group` says reaches
    /// `deliver`, one merged notification at a time.
    func startReading(group: pid_t, logger: Logger, deliver: @escaping @Sendable (SignerNotification) async -> Void) {
        let starts = state.withLock { state in
            guard state == .open else { return false }
            state = .reading
            return true
        }
        guard starts else { return }
        let dropped = Dropped(logger: logger)
        BlockingThread.start(stackSize: 256 * 1024) { [self] in
            read(group: group, dropped: dropped, deliver: deliver)
            Glibc.close(descriptor)
        }
    }

    /// Removes the socket; the reader thread (if any) ends and closes it.
    func close() {
        let previous = state.withLock { state in
            defer { state = .closed }
            return state
        }
        guard previous != .closed else { return }
        unlink(path)
        if previous == .reading {
            shutdown(descriptor, Int32(SHUT_RDWR))
        } else {
            Glibc.close(descriptor)
        }
    }

    private var isClosed: Bool { state.withLock { $0 == .closed } }

    private func read(
        group: pid_t, dropped: Dropped,
        deliver: @escaping @Sendable (SignerNotification) async -> Void
    ) {
        let capacity = SignerNotification.maximumBytes + 1
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        let controlSize =
            scs_cmsg_space(MemoryLayout<Int32>.size * 3)
            + scs_cmsg_space(MemoryLayout<Int32>.size * Self.descriptorRoom)
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: controlSize, alignment: 8)
        defer {
            buffer.deallocate()
            control.deallocate()
        }
        while true {
            var vector = iovec(iov_base: buffer.baseAddress, iov_len: capacity)
            var sender: pid_t?
            var flags: Int32 = 0
            let received = withUnsafeMutablePointer(to: &vector) { vectorPointer in
                var message = msghdr()
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                message.msg_control = control.baseAddress
                message.msg_controllen = controlSize
                // MSG_TRUNC: the datagram's true length, so an oversized one is seen as such.
                let received = recvmsg(descriptor, &message, Int32(MSG_TRUNC) | Int32(MSG_CMSG_CLOEXEC))
                if received >= 0 {
                    sender = Self.takeControl(&message)
                    flags = message.msg_flags
                }
                return received
            }
            if received < 0 {
                if errno == EINTR { continue }
                return
            }
            // After `shutdown` the socket reads as empty forever.
            if received == 0, isClosed { return }
            if flags & Int32(MSG_CTRUNC) != 0 {
                dropped(.control, "a datagram with too much control data was dropped")
                continue
            }
            guard received <= SignerNotification.maximumBytes else {
                dropped(.size, "a datagram of \(received) bytes (over \(SignerNotification.maximumBytes)) was dropped")
                continue
            }
            guard let sender else {
                dropped(.sender, "a datagram without credentials was dropped")
                continue
            }
            let senderGroup = getpgid(sender)
            guard senderGroup == group else {
                dropped(
                    .sender,
                    senderGroup < 0
                        ? "a datagram from pid \(sender), which has already exited, was dropped (systemd-notify: do not use --no-block)"
                        : "a datagram from pid \(sender), outside the signer's process group, was dropped")
                continue
            }
            guard let notification = SignerNotification(parsing: UnsafeRawBufferPointer(rebasing: buffer[..<received])) else {
                dropped(.content, "a datagram with a NUL byte was dropped")
                continue
            }
            if !notification.isEmpty { hand(notification, to: deliver) }
        }
    }

    /// The sender's pid from `SCM_CREDENTIALS`; every descriptor passed is closed.
    private static func takeControl(_ message: inout msghdr) -> pid_t? {
        var sender: pid_t?
        var header = scs_cmsg_firsthdr(&message)
        while let current = header {
            let data = UnsafeMutableRawPointer(scs_cmsg_data(current)!)
            let length = Int(current.pointee.cmsg_len) - (data - UnsafeMutableRawPointer(current))
            if current.pointee.cmsg_level == SOL_SOCKET {
                if current.pointee.cmsg_type == Int32(SCM_RIGHTS) {
                    for index in 0..<(length / MemoryLayout<Int32>.size) {
                        Glibc.close(data.loadUnaligned(fromByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self))
                    }
                } else if current.pointee.cmsg_type == SCS_SCM_CREDENTIALS, length >= 12 {
                    // struct ucred: pid, uid, gid (layout checked in CSoundscapeSystem/system.c).
                    sender = data.loadUnaligned(as: pid_t.self)
                }
            }
            header = scs_cmsg_nxthdr(&message, current)
        }
        return sender
    }

    /// Folds `notification` into what waits, and starts handing it on unless that is under way.
    private func hand(_ notification: SignerNotification, to deliver: @escaping @Sendable (SignerNotification) async -> Void) {
        let starts = pending.withLock { pending in
            if pending.notification == nil {
                pending.notification = notification
            } else {
                pending.notification!.merge(notification)
            }
            defer { pending.delivering = true }
            return !pending.delivering
        }
        guard starts else { return }
        Task { [self] in
            while let next = pending.withLock({ pending in
                defer { pending.notification = nil }
                if pending.notification == nil { pending.delivering = false }
                return pending.notification
            }) {
                await deliver(next)
            }
        }
    }

    /// Why datagrams were dropped, in the log: a few a minute for each reason, so a
    /// flood of one kind (a stranger's) hides no other (the signer's own mistakes).
    private struct Dropped: Sendable {
        enum Reason: CaseIterable { case control, size, sender, content }
        private let logs: [Reason: RateLimitedLog]

        init(logger: Logger) {
            logs = Dictionary(
                uniqueKeysWithValues: Reason.allCases.map { reason in
                    (reason, RateLimitedLog(burst: 5, per: .seconds(60)) { logger.notice("signer notify socket: \($0)") })
                })
        }

        func callAsFunction(_ reason: Reason, _ message: @autoclosure () -> String) {
            logs[reason]?(message())
        }
    }

    private static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
