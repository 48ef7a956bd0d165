import Glibc
import SoundscapeCore

/// Takes over the control socket systemd listens on for us (`soundscaped.socket`), as
/// `sd_listen_fds_with_names(3)` does.
///
/// With socket activation the socket outlives the daemon: clients that connect while it
/// starts or restarts wait in the backlog instead of finding nothing there.
public enum SocketActivation {
    /// `SD_LISTEN_FDS_START`: passed descriptors follow stdin, stdout and stderr.
    public static let firstDescriptor: CInt = 3
    /// `FileDescriptorName=` of the control socket in `soundscaped.socket`.
    public static let controlName = "control"
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    public struct PassedSocket: Sendable, Hashable {
        public var descriptor: CInt
        /// From `LISTEN_FDNAMES`; nil when systemd sent no names.
        public var name: String?
    }

    public struct Sockets: Sendable, Hashable {
        /// A listening Unix stream socket: serve it with `VarlinkServer.Listener.boundFileDescriptor`.
        public var control: CInt
        /// Everything systemd passed, the control socket included, all close-on-exec now.
        public var passed: [PassedSocket]
    }

    /// The control socket systemd passed, nil when this process was not socket-activated.
    ///
    /// `LISTEN_PID` must be ours: the variables survive into children, and a child must
    /// not take its parent's sockets for its own. Marks every passed descriptor
    /// close-on-exec, so none leaks into a process the daemon starts.
    public static func listeners(environment: [String: String], pid: pid_t)
        -> Result<Sockets?, SocketActivationError>
    {
        listeners(environment: environment, pid: pid, startingAt: firstDescriptor)
    }

    /// Tests pass sockets at free high numbers: descriptor 3 belongs to someone in a test process.
    static func listeners(environment: [String: String], pid: pid_t, startingAt first: CInt)
        -> Result<Sockets?, SocketActivationError>
    {
        guard let pidText = environment["LISTEN_PID"], let countText = environment["LISTEN_FDS"] else {
            return .success(nil)
        }
        guard let owner = parseDecimal(pidText), owner > 0 else {
            return .failure(.invalidPID(pidText))
        }
        guard owner == UInt64(pid) else { return .success(nil) }
        guard let count = parseDecimal(countText), count > 0,
            UInt64(first) + count <= UInt64(max(sysconf(Int32(_SC_OPEN_MAX)), 0))
        else {
            return .failure(.invalidCount(countText))
        }
        let descriptors = Array(first..<first + CInt(count))
        let names = environment["LISTEN_FDNAMES"].flatMap {
            $0.isEmpty ? nil : SeparatedText.pieces($0, at: ":").map(String.init)
        }
        if let names, names.count != descriptors.count {
            return .failure(.nameCountMismatch(names: names, descriptors: descriptors.count))
        }
        let passed = descriptors.enumerated().map { PassedSocket(descriptor: $1, name: names?[$0]) }

        for socket in passed {
            if let failure = SocketCheck.closeOnExec(socket.descriptor) { return .failure(failure) }
        }
        let chosen: PassedSocket
        if let control = passed.first(where: { $0.name == controlName }) {
            chosen = control
        } else if names == nil || passed.count == 1 {
            chosen = passed[0]
        } else {
            return .failure(.noControlSocket(names: names ?? []))
        }
        if let failure = SocketCheck.listeningUnixStream(chosen.descriptor) { return .failure(failure) }
        return .success(Sockets(control: chosen.descriptor, passed: passed))
    }

    /// Removes `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` from the process environment.
    ///
    /// Call it right after ``listeners(environment:pid:)`` and before starting any
    /// process or thread that reads the environment: setenv(3) and friends are not
    /// thread-safe, and a child should not see sockets announced that it does not have.
    public static func unsetEnvironment() {
        for name in variables { unsetenv(name) }
    }
}

public enum SocketActivationError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidPID(String)
    case invalidCount(String)
    case nameCountMismatch(names: [String], descriptors: Int)
    /// Several sockets, named, and none of them `control`.
    case noControlSocket(names: [String])
    case notOpen(descriptor: CInt)
    case notASocket(descriptor: CInt)
    case notUnixFamily(descriptor: CInt, family: CInt)
    case notStream(descriptor: CInt, type: CInt)
    case notListening(descriptor: CInt)
    case systemCallFailed(String, descriptor: CInt, errno: CInt)

    public var description: String {
        let prefix = "socket activation: "
        switch self {
        case .invalidPID(let text): return prefix + "LISTEN_PID=\(text) is not a process id"
        case .invalidCount(let text): return prefix + "LISTEN_FDS=\(text) is not a usable count of descriptors"
        case .nameCountMismatch(let names, let count):
            return prefix + "LISTEN_FDNAMES names \(names.count) sockets but LISTEN_FDS passes \(count)"
        case .noControlSocket(let names):
            return prefix + "no socket named '\(SocketActivation.controlName)' among \(names.joined(separator: ", "))"
        case .notOpen(let fd): return prefix + "descriptor \(fd) is not open"
        case .notASocket(let fd): return prefix + "descriptor \(fd) is not a socket"
        case .notUnixFamily(let fd, let family): return prefix + "descriptor \(fd) is not a Unix socket (address family \(family))"
        case .notStream(let fd, let type): return prefix + "descriptor \(fd) is not a stream socket (type \(type))"
        case .notListening(let fd): return prefix + "descriptor \(fd) is not listening"
        case .systemCallFailed(let call, let fd, let code):
            return prefix + "\(call) on descriptor \(fd) failed: \(String(cString: strerror(code)))"
        }
    }
}
