import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real systemd user manager on a machine that did not boot systemd (a CI VM, a
/// container), for checks of the installed units. Needs root.
///
/// `systemd --user` refuses to run unless /run/systemd/system exists, and that path
/// must not appear on the host (other tools would then believe systemd booted). So the
/// manager runs in a private mount namespace (`unshare -m`) with a tmpfs on
/// /run/systemd, and every command for it enters that namespace (`run`, or
/// `nsenter -t PID -m --root --wd` from a shell). Start it after the graph's PipeWire
/// and WirePlumber: WirePlumber quits when it believes systemd booted but finds no
/// logind.
///
/// The manager, and every service it starts, gets `environment` (usually the caller's,
/// with a graph's `XDG_RUNTIME_DIR`; `PipeWireGraph.startUserManager` gives it the
/// graph's). Where dbus-user-session is installed (Debian's default session bus), the
/// manager's dbus.socket takes over `$XDG_RUNTIME_DIR/bus`, as in a desktop session.
public final class SystemdUserManager: @unchecked Sendable {
    public let environment: [String: String]
    private let process: ChildProcess

    /// The manager's pid, for `nsenter -t PID -m --root --wd`.
    public var pid: Int32 { process.pid }

    /// Starts `systemd --user` with `environment` (which must hold `XDG_RUNTIME_DIR`),
    /// its output appended to `log`, and waits (bounded by `timeout`) until
    /// `systemctl --user show-environment` answers.
    public init(environment: [String: String], log: URL, timeout: Duration = .seconds(15)) throws {
        guard environment["XDG_RUNTIME_DIR"] != nil else {
            throw HarnessError("SystemdUserManager: the environment has no XDG_RUNTIME_DIR")
        }
        try ExternalTools.require(["unshare", "nsenter", "systemctl", "mount"], searchPath: environment["PATH"])
        guard FileManager.default.isExecutableFile(atPath: "/lib/systemd/systemd") else {
            throw HarnessError("no /lib/systemd/systemd: install the apt package systemd")
        }
        try FileManager.default.createDirectory(atPath: "/run/systemd", withIntermediateDirectories: true)
        self.environment = environment
        // unshare execs: the pid is the manager's. --propagation private: its mounts stay its own.
        process = try ChildProcess.start(
            "unshare",
            [
                "-m", "--propagation", "private", "sh", "-c",
                "mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && exec /lib/systemd/systemd --user",
            ],
            environment: environment, stdout: .file(log), stderr: .file(log), name: "systemd-user-manager")
        do {
            try waitUntil(timeout: timeout, pollInterval: .milliseconds(50), "the systemd user manager to answer") {
                if let status = process.exitStatus {
                    throw HarnessError("the systemd user manager \(status); its log, \(log.path):\n\(Self.tail(of: log))")
                }
                return (try? systemctl("show-environment").succeeded) ?? false
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Runs `arguments` in the manager's mount namespace (its root and working
    /// directory: entering a namespace moves the caller to the namespace's root, which
    /// in a chroot is not the manager's), with the manager's environment.
    public func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> ProcessResult {
        try ChildProcess.run(
            ["nsenter", "-t", String(pid), "-m", "--root", "--wd", "--"] + arguments, environment: environment,
            timeout: timeout)
    }

    /// `systemctl --user ARGUMENTS` in the manager.
    public func systemctl(_ arguments: String...) throws -> ProcessResult {
        try run(["systemctl", "--user"] + arguments)
    }

    /// SIGTERM, then SIGKILL after 5 s. Idempotent.
    public func stop() {
        process.terminate(gracePeriod: .seconds(5))
    }

    private static func tail(of log: URL) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(20).joined(separator: "\n")
    }
}

extension PipeWireGraph {
    /// A systemd user manager in this graph: `environment` (default: the graph's own),
    /// its log `logs/user-manager.log`. Stop it before the graph (the graph's stop
    /// kills what carries its marker, the manager included, but without a clean stop).
    public func startUserManager(environment: [String: String]? = nil) throws -> SystemdUserManager {
        try SystemdUserManager(
            environment: environment ?? self.environment,
            log: logDirectory.appendingPathComponent("user-manager.log"))
    }
}
