import Glibc
import Logging
import SoundscapeSystem
import Synchronization

/// Tells systemd about the daemon's state, as `sd_notify(3)` does, without libsystemd.
///
/// Notifications are advice to the service manager, never a precondition for playing:
/// nothing here throws or blocks. A failed send is returned to the caller and logged once
/// (later ones at debug level), so a vanished manager cannot flood the journal.
/// Outside systemd (`NOTIFY_SOCKET` unset) every call does nothing.
public final class SystemdNotifier: Sendable {
    public enum Delivery: Sendable, Equatable {
        case sent
        /// Not started by a service manager that listens: there is no one to tell.
        case notUnderSystemd
        case failed(Failure)
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// `NOTIFY_SOCKET` is neither an absolute path nor `@abstract`, or is too long.
        case unsupportedAddress(String)
        case socketFailed(errno: CInt)
        case sendFailed(errno: CInt)
        case messageTooLong(bytes: Int)

        public var description: String {
            switch self {
            case .unsupportedAddress(let value): "NOTIFY_SOCKET=\(value) is not a socket address this daemon supports"
            case .socketFailed(let code): "cannot create the notification socket: \(String(cString: strerror(code)))"
            case .sendFailed(let code): "cannot notify systemd: \(String(cString: strerror(code)))"
            case .messageTooLong(let bytes): "notification of \(bytes) bytes exceeds systemd's \(maximumMessageBytes)"
            }
        }
    }

    /// systemd reads notifications into a buffer of this size and drops longer datagrams whole.
    public static let maximumMessageBytes = 4096

    private let address: UnixSocketAddress?
    private let descriptor: CInt
    private let setupFailure: Failure?
    private let logger: Logger
    private let hasLoggedFailure = Atomic<Bool>(false)

    /// Reads `NOTIFY_SOCKET`; without it the notifier is inert.
    public convenience init(environment: [String: String], logger: Logger) {
        self.init(notifySocket: environment["NOTIFY_SOCKET"], logger: logger)
    }

    init(notifySocket: String?, logger: Logger) {
        self.logger = logger
        guard let notifySocket, !notifySocket.isEmpty else {
            (address, descriptor, setupFailure) = (nil, -1, nil)
            return
        }
        do throws(UnixSocket.Failure) {
            address = try UnixSocketAddress(notation: notifySocket)
            // One socket for the daemon's life. Unconnected, so each send resolves the
            // address afresh: a manager re-executing itself binds a new socket at the same path.
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            descriptor = fd
            setupFailure = fd < 0 ? .socketFailed(errno: errno) : nil
        } catch {
            (address, descriptor, setupFailure) = (nil, -1, .unsupportedAddress(notifySocket))
        }
        if let setupFailure { report(setupFailure) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// True when a service manager asked to be told about our state.
    public var isEnabled: Bool { address != nil && setupFailure == nil }

    /// `READY=1` with a first `STATUS=`: systemd reports the unit started and starts what
    /// is ordered after it.
    @discardableResult
    public func ready(status: String) -> Delivery {
        send(["READY=1", "STATUS=\(status)"])
    }

    @discardableResult
    public func status(_ text: String) -> Delivery {
        send(["STATUS=\(text)"])
    }

    /// `RELOADING=1` with the `MONOTONIC_USEC=` sd_notify(3) asks for beside it (systemd
    /// 253's `Type=notify-reload` matches the two; 252 takes the message and waits for `READY=1`).
    @discardableResult
    public func reloading() -> Delivery {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)"])
    }

    /// `READY=1` again after a reload, with the status line.
    @discardableResult
    public func reloaded(status: String) -> Delivery {
        send(["READY=1", "STATUS=\(status)"])
    }

    /// `STOPPING=1`: the stop was our own decision (or a signal's), not a crash.
    @discardableResult
    public func stopping() -> Delivery {
        send(["STOPPING=1"])
    }

    @discardableResult
    public func watchdog() -> Delivery {
        send(["WATCHDOG=1"])
    }

    /// Sends `KEY=VALUE` fields in one datagram.
    ///
    /// Line breaks and NULs inside a field become spaces: the datagram is a list of
    /// lines, and text from elsewhere (a soundscape's file name in a STATUS) must not be
    /// able to add a `READY=1` or `MAINPID=` of its own.
    @discardableResult
    public func send(_ fields: [String]) -> Delivery {
        if let setupFailure { return .failed(setupFailure) }
        guard let address else { return .notUnderSystemd }
        guard !fields.isEmpty else { return .sent }
        let message = Array(fields.map(Self.singleLine).joined(separator: "\n").utf8)
        guard message.count <= Self.maximumMessageBytes else {
            return fail(.messageTooLong(bytes: message.count))
        }
        let code: CInt = address.withSockaddr { target, length in
            message.withUnsafeBytes { bytes in
                while true {
                    if sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), target, length) >= 0 {
                        return 0
                    }
                    if errno != EINTR { return errno }
                }
            }
        }
        return code == 0 ? .sent : fail(.sendFailed(errno: code))
    }

    static func singleLine(_ field: String) -> String {
        guard field.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else { return field }
        return String(field.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" || $0 == "\0" ? " " : $0 })
    }

    private func fail(_ failure: Failure) -> Delivery {
        report(failure)
        return .failed(failure)
    }

    private func report(_ failure: Failure) {
        if hasLoggedFailure.exchange(true, ordering: .relaxed) {
            logger.debug("\(failure)")
        } else {
            logger.warning("\(failure); systemd will not hear about our state (further failures are logged at debug level)")
        }
    }
}
