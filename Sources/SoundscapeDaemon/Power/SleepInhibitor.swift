import Glibc
import SoundscapeCore
import SoundscapeSystem

/// Holds a logind sleep inhibitor for `KeepAwakeMachine`, through systemd's
/// own `systemd-inhibit` rather than a D-Bus library in the daemon.
///
/// Why a child and not sd-bus here: the daemon keeps no D-Bus connection of
/// its own (a system-bus connection is one more socket, thread-safety rule and
/// reconnect to carry on the event loop, for a preference most users leave
/// off), and the inhibitor's life is then a process's, which nothing in the
/// daemon has to tend.
/// `systemd-inhibit` calls exactly `Inhibit("sleep:idle", who, why, "block")`
/// on the system bus (honouring `DBUS_SYSTEM_BUS_ADDRESS`), keeps the returned
/// descriptor, and runs a command; logind drops the inhibitor the moment that
/// descriptor closes, which is when `systemd-inhibit` exits.
///
/// The command is `/bin/sh` announcing "held" and then blocking on a read of a
/// pipe whose only write end the daemon holds. So the inhibitor is held exactly
/// while the daemon keeps that pipe open: closing it (release) ends the shell,
/// then `systemd-inhibit`; a daemon killed by SIGKILL closes it too, and no
/// inhibitor outlives the daemon. A `systemd-inhibit` that fails (no logind,
/// polkit refuses) exits at once and says why on stderr; that text is the reason.
final class SleepInhibitor: @unchecked Sendable {
    static let arguments = [
        "systemd-inhibit", "--what=sleep:idle", "--who=soundscaped", "--why=Keeping the signer online", "--mode=block",
        "/bin/sh", "-c", "echo held; read -r _",
    ]

    private let pid: pid_t
    private let lifeline: Int32
    private var released = false

    /// Starts an attempt; `held` is called once logind holds the inhibitor,
    /// `ended` once when the attempt is over (with why, in words). Both come on
    /// a thread of their own, never on the caller's.
    init(
        environment: [String: String],
        held: @escaping @Sendable () -> Void, ended: @escaping @Sendable (String) -> Void
    ) throws(SpawnError) {
        var pipes: [(read: Int32, write: Int32)] = []
        do {
            for _ in 0..<3 { pipes.append(try Spawn.pipe()) }
        } catch {
            pipes.forEach {
                close($0.read); close($0.write)
            }
            throw error
        }
        let (lifeline, stdout, stderr) = (pipes[0], pipes[1], pipes[2])
        let pid: pid_t
        do {
            pid = try Spawn.run(
                program: Self.arguments[0], arguments: Self.arguments, environment: environment,
                searchPath: true, stdio: [lifeline.read, stdout.write, stderr.write])
        } catch {
            [lifeline.read, lifeline.write, stdout.read, stdout.write, stderr.read, stderr.write].forEach { close($0) }
            throw SpawnError("systemd-inhibit cannot run: \(error)")
        }
        [lifeline.read, stdout.write, stderr.write].forEach { close($0) }
        self.pid = pid
        self.lifeline = lifeline.write
        let (out, err) = (stdout.read, stderr.read)
        BlockingThread.start {
            if Self.readAll(out).hasPrefix("held") { held() }
            close(out)
            let complaint = Self.readAll(err)
            close(err)
            let reason = Reaper.wait(for: pid)
            ended(Self.reason(complaint: complaint, exit: reason))
        }
    }

    /// Closes the lifeline: the shell's read returns, `systemd-inhibit` exits and
    /// its descriptor (so the inhibitor) goes with it. SIGTERM too, in case the
    /// shell has not started yet. Called once by its owner (the player); later calls do nothing.
    func release() {
        guard !released else { return }
        released = true
        close(lifeline)
        kill(pid, SIGTERM)
    }

    /// The environment `systemd-inhibit` needs: a PATH, and the system bus if it was moved.
    static func environment(from parent: [String: String]) -> [String: String] {
        var environment = ["PATH": parent["PATH"] ?? "/usr/local/bin:/usr/bin:/bin", "SYSTEMD_LOG_LEVEL": "err"]
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = parent["DBUS_SYSTEM_BUS_ADDRESS"]
        return environment
    }

    static func reason(complaint: String, exit: ExitReason) -> String {
        let line = complaint.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        if !line.isEmpty { return line }
        return exit == .signaled(SIGTERM) || exit == .exited(code: 0) ? "released" : "systemd-inhibit \(exit)"
    }

    /// Reads until end of file (bounded: the child says a word or one error line).
    private static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < 4096 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
            if bytes.starts(with: Array("held\n".utf8)) { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
