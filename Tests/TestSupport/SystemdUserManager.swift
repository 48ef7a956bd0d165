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
///
/// Given an `account`, the manager is that regular user's, as logind and user@UID.service
/// would start it: in a cgroup of its own delegated to the user (the manager refuses to
/// run without one), with a tmpfs owned by the user, mode 0700, on `XDG_RUNTIME_DIR`
/// (inside the namespace), and the user's uid, gid and groups. `run` runs commands as
/// that user. The cgroups are removed when the manager stops.
public final class SystemdUserManager: @unchecked Sendable {
    /// A regular user, from the passwd database.
    public struct Account: Sendable, Equatable {
        public let name: String
        public let uid: uid_t
        public let gid: gid_t

        /// The user `name`; throws if there is none.
        public init(name: String) throws {
            guard let entry = getpwnam(name) else { throw HarnessError("no user '\(name)' in the passwd database") }
            self.name = name
            uid = entry.pointee.pw_uid
            gid = entry.pointee.pw_gid
        }

        /// `setpriv` options that make a command this user, its groups included.
        var setpriv: [String] { ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups"] }
    }

    public let environment: [String: String]
    /// The user the manager runs as; nil: the caller (root).
    public let account: Account?
    private let process: ChildProcess
    /// The cgroups delegated to `account`'s manager, removed when it stops.
    private let cgroups: [String]

    /// The manager's pid, for `nsenter -t PID -m --root --wd` (and, for an
    /// account, `setpriv`: `Account.setpriv`).
    public var pid: Int32 { process.pid }

    /// Starts `systemd --user` with `environment` (which must hold `XDG_RUNTIME_DIR`,
    /// and for an account `PATH` and `HOME` as well: it is all the manager gets),
    /// its output appended to `log`, and waits (bounded by `timeout`) until
    /// `systemctl --user show-environment` answers.
    public init(
        environment: [String: String], log: URL, account: Account? = nil, timeout: Duration = .seconds(15)
    ) throws {
        guard let runtimeDirectory = environment["XDG_RUNTIME_DIR"] else {
            throw HarnessError("SystemdUserManager: the environment has no XDG_RUNTIME_DIR")
        }
        try ExternalTools.require(["unshare", "nsenter", "systemctl", "mount"], searchPath: environment["PATH"])
        guard FileManager.default.isExecutableFile(atPath: "/lib/systemd/systemd") else {
            throw HarnessError("no /lib/systemd/systemd: install the apt package systemd")
        }
        try FileManager.default.createDirectory(atPath: "/run/systemd", withIntermediateDirectories: true)
        self.environment = environment
        self.account = account
        // The script's arguments: the cgroups to join, then what to mount on XDG_RUNTIME_DIR.
        var script = "mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && "
        var scriptArguments: [String] = []
        if let account {
            guard environment["HOME"] != nil, environment["PATH"] != nil else {
                throw HarnessError("SystemdUserManager: \(account.name)'s environment needs HOME and PATH")
            }
            try ExternalTools.require(["setpriv"], searchPath: environment["PATH"])
            cgroups = try Self.delegateCgroups(to: account)
            try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true)
            script =
                "for cgroup in \"$@\"; do echo $$ > \"$cgroup/cgroup.procs\" || exit 1; done && " + script
                + "mount -t tmpfs -o mode=0700,uid=\(account.uid),gid=\(account.gid) tmpfs \"$XDG_RUNTIME_DIR\" && exec "
                + account.setpriv.joined(separator: " ") + " /lib/systemd/systemd --user"
            scriptArguments = cgroups
        } else {
            cgroups = []
            script += "exec /lib/systemd/systemd --user"
        }
        // unshare execs: the pid is the manager's. --propagation private: its mounts stay its own.
        do {
            process = try ChildProcess.start(
                "unshare", ["-m", "--propagation", "private", "sh", "-c", script, "sh"] + scriptArguments,
                environment: environment, stdout: .file(log), stderr: .file(log), name: "systemd-user-manager")
        } catch {
            Self.remove(cgroups: cgroups)
            throw error
        }
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
    /// in a chroot is not the manager's), with the manager's environment, as its user.
    public func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> ProcessResult {
        try ChildProcess.run(
            ["nsenter", "-t", String(pid), "-m", "--root", "--wd", "--"] + (account?.setpriv ?? []) + arguments,
            environment: environment, timeout: timeout)
    }

    /// `systemctl --user ARGUMENTS` in the manager.
    public func systemctl(_ arguments: String...) throws -> ProcessResult {
        try run(["systemctl", "--user"] + arguments)
    }

    /// SIGTERM, then SIGKILL after 5 s; then an account's cgroups go. Idempotent.
    public func stop() {
        process.terminate(gracePeriod: .seconds(5))
        Self.remove(cgroups: cgroups)
    }

    /// A cgroup named for `account` in each hierarchy systemd uses (the unified one
    /// and, on a hybrid machine, the named systemd one), owned by the account, as
    /// systemd delegates user@UID.service's.
    private static func delegateCgroups(to account: Account) throws -> [String] {
        let name = "soundscape-harness-user-\(account.uid)"
        let roots =
            FileManager.default.fileExists(atPath: "/sys/fs/cgroup/unified")
            ? ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"] : ["/sys/fs/cgroup"]
        let cgroups = roots.map { "\($0)/\(name)" }
        remove(cgroups: cgroups)  // a killed run's
        for cgroup in cgroups {
            guard mkdir(cgroup, 0o755) == 0 || errno == EEXIST else {
                remove(cgroups: cgroups)
                throw HarnessError("cannot make the cgroup \(cgroup): \(String(cString: strerror(errno)))")
            }
            for entry in [""] + ((try? FileManager.default.contentsOfDirectory(atPath: cgroup)) ?? []) {
                let path = entry.isEmpty ? cgroup : "\(cgroup)/\(entry)"
                guard chown(path, account.uid, account.gid) == 0 else {
                    remove(cgroups: cgroups)
                    throw HarnessError("cannot give \(path) to \(account.name): \(String(cString: strerror(errno)))")
                }
            }
        }
        return cgroups
    }

    /// Removes `cgroups` and the cgroups the manager made in them, deepest first,
    /// waiting (up to 5 s) for their processes to be gone.
    private static func remove(cgroups: [String]) {
        let deadline = ContinuousClock.now + .seconds(5)
        for cgroup in cgroups where FileManager.default.fileExists(atPath: cgroup) {
            let children = FileManager.default.enumerator(atPath: cgroup)?.compactMap { $0 as? String } ?? []
            let directories = children.map { "\(cgroup)/\($0)" }.filter { path in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            }
            for directory in directories.sorted(by: { $0.count > $1.count }) + [cgroup] {
                while rmdir(directory) != 0, errno == EBUSY, ContinuousClock.now < deadline {
                    usleep(20_000)  // its last processes are exiting: no event says when
                }
            }
        }
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
    /// An account's manager logs to `logs/user-manager-NAME.log`.
    public func startUserManager(
        environment: [String: String]? = nil, account: SystemdUserManager.Account? = nil
    ) throws -> SystemdUserManager {
        try SystemdUserManager(
            environment: environment ?? self.environment,
            log: logDirectory.appendingPathComponent(account.map { "user-manager-\($0.name).log" } ?? "user-manager.log"),
            account: account)
    }
}
