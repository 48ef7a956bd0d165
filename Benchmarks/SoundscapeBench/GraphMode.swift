import ArgumentParser
import Dispatch
import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `soundscape-bench graph [--sink NAME]... [--no-hardware DIR | --with-hardware]`: the tests' private
/// PipeWire graph (TestSupport's `PipeWireGraph`: its own D-Bus, PipeWire and
/// WirePlumber, kept away from hardware, logs in `logs/`) and systemd user manager
/// (`SystemdUserManager`), for the scripts: scripts/lib.sh and scripts/user-manager.sh
/// (a bash coproc) and the soak (scripts/soak.d/soak_graph.py).
///
/// Once the graph runs with its sinks, it prints what the caller must export to join
/// it (`KEY=VALUE` lines: `XDG_RUNTIME_DIR`, `PIPEWIRE_RUNTIME_DIR`,
/// `DBUS_SESSION_BUS_ADDRESS` and the cleanup markers; the graph's directory is
/// `XDG_RUNTIME_DIR`), then `ready`. Then it reads one command a line on stdin and
/// answers each with one line, `ok [VALUE]` or `error: MESSAGE` (the whole message on
/// stderr):
///
///     sink NAME              a null sink NAME, unless the graph has one
///     destroy NAME           the node NAME destroyed (`pw-cli destroy` returned, not polled
///                            until gone); answers when, on CLOCK_MONOTONIC (s)
///     default NAME           NAME made the default sink (returns once WirePlumber did)
///     restart                pipewire and wireplumber restarted, as `systemctl --user
///                            restart pipewire` does, and the sinks made again
///     restart wireplumber    wireplumber alone
///     kill DAEMON SIGNAL     SIGNAL (KILL, TERM, STOP, CONT, … or a number) to DAEMON
///                            (pipewire, wireplumber, dbus-daemon); a terminating one
///                            returns once it exited
///     status DAEMON          `ok running`, or `ok exited CODE` (128 + a signal)
///     devices                `ok` unless the graph has a device
///     user-manager [ENVFILE [USER]]
///                            a systemd user manager started, its pid answered; its
///                            environment is ENVFILE's (`env -0` output), else the graph's.
///                            With USER, that regular user's own (SystemdUserManager's
///                            account: a delegated cgroup, a tmpfs XDG_RUNTIME_DIR), one
///                            beside the caller's
///     stop-user-manager [USER]
///                            that user manager stopped (without USER, the caller's)
///     stop                   everything stopped; the last answer
///
/// `--with-hardware` leaves WirePlumber its own configuration, monitors and all, and
/// does not fail on a device: scripts/check-wireplumber-05's control, which shows that
/// its check of the isolation could fail.
///
/// End-of-file on stdin stops everything too, and so does the end of the parent (a
/// shell's background children hold the coproc's stdin open after it): this process
/// is then another's child. The graph's watchdog stops everything if this process is
/// killed. SIGINT is ignored: a Ctrl-C in the caller's terminal is for
/// the caller (scripts/run's daemon must not lose its graph under it).
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "The tests' private PipeWire graph and systemd user manager, for the scripts.",
        discussion: """
            Prints KEY=VALUE lines to export, then `ready`; then answers one command a line
            on stdin with `ok [VALUE]` or `error: MESSAGE`:
              sink NAME | destroy NAME | default NAME | restart [wireplumber]
              kill DAEMON SIGNAL | status DAEMON | devices
              user-manager [ENVFILE [USER]] | stop-user-manager [USER] | stop
            (Benchmarks/SoundscapeBench/GraphMode.swift says what each does.)
            """,
        helpNames: BenchArguments.helpNames)

    @Option(name: .customLong("sink"), help: ArgumentHelp("A null sink NAME, made once the graph runs (repeatable).", valueName: "name"))
    var sinks: [String] = []
    @Option(
        help: ArgumentHelp("WirePlumber's configuration that keeps it away from hardware (default: the checkout's).", valueName: "dir"),
        completion: .directory)
    var noHardware: String?
    @Flag(help: "Leave WirePlumber its own configuration, monitors and all, and do not fail on a device.")
    var withHardware = false

    func run() throws {
        let hardware = self.noHardware.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? PipeWireGraph.checkoutNoHardwareConfiguration
        throw ExitCode(GraphMode.main(sinks: sinks, noHardware: hardware, isolateHardware: !withHardware))
    }
}

enum GraphMode {
    static func main(sinks: [String], noHardware: URL, isolateHardware: Bool) -> Int32 {
        _ = signal(SIGINT, SIG_IGN)
        _ = signal(SIGPIPE, SIG_IGN)

        let session = GraphSession(graph: PipeWireGraph(isolateHardware: isolateHardware, noHardwareConfiguration: noHardware))
        _ = signal(SIGTERM, SIG_IGN)
        let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        terminate.setEventHandler {
            session.stop()
            exit(143)
        }
        terminate.resume()
        let parent = getppid()
        let orphaned = DispatchSource.makeTimerSource(queue: .global())
        orphaned.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        orphaned.setEventHandler {
            guard getppid() != parent else { return }
            session.stop()
            exit(0)
        }
        orphaned.resume()

        do {
            try session.graph.start()
            for sink in sinks { try session.makeSink(sink) }
        } catch {
            session.stop()
            answer(GraphSession.failure(error))
            return 1
        }
        for (key, value) in session.graph.sessionEnvironment.sorted(by: { $0.key < $1.key }) {
            answer("\(key)=\(value)")
        }
        answer("ready")
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            guard !words.isEmpty else { continue }
            answer(session.handle(words))
            if words == ["stop"] { return 0 }
        }
        session.stop()
        return 0
    }

    /// One line on stdout, written at once (no buffer to flush).
    static func answer(_ line: String) {
        FileHandle.standardOutput.write(Data("\(line)\n".utf8))
    }
}

/// The graph, its sinks and the user manager, driven by `GraphMode`'s commands.
final class GraphSession: @unchecked Sendable {
    let graph: PipeWireGraph
    private let lock = NSLock()
    /// The sinks made, in order, for `restart` to make again.
    private var sinks: [String] = []
    /// The user managers, by user name ("": the caller's).
    private var userManagers: [String: SystemdUserManager] = [:]

    init(graph: PipeWireGraph) { self.graph = graph }

    /// The answer to one command.
    func handle(_ words: [String]) -> String {
        do {
            switch (words[0], words.count) {
            case ("sink", 2):
                try makeSink(words[1])
            case ("destroy", 2):
                // Not waited for: no reader polls the graph while the daemon recovers.
                let destroyed = try graph.destroyNode(name: words[1], waitUntilGone: false)
                lock.withLock { sinks.removeAll { $0 == words[1] } }
                return "ok \(destroyed)"
            case ("default", 2):
                try graph.setDefaultSink(name: words[1])
            case ("restart", 1):
                try graph.restartPipeWire()
                for sink in lock.withLock({ sinks }) { try graph.createNullSink(name: sink) }
            case ("restart", 2) where words[1] == PipeWireGraph.Daemon.wireplumber.rawValue:
                try graph.restartWirePlumber()
            case ("kill", 3):
                let daemon = try Self.daemon(words[1])
                let number = try Self.signal(words[2])
                switch daemon {
                case .pipewire: graph.killPipeWire(signal: number)
                case .wireplumber: graph.killWirePlumber(signal: number)
                case .dbus: graph.process(.dbus)?.signal(number)
                }
            case ("status", 2):
                guard let child = graph.process(try Self.daemon(words[1])) else { return "ok exited 0" }
                return child.exitStatus.map { "ok exited \($0.code)" } ?? "ok running"
            case ("devices", 1):
                try graph.requireNoDevices()
            case ("user-manager", 1...3):
                let user = words.count == 3 ? words[2] : ""
                guard lock.withLock({ userManagers[user] }) == nil else {
                    throw HarnessError(user.isEmpty ? "a user manager runs already" : "\(user)'s user manager runs already")
                }
                let environment = try words.count >= 2 ? Self.environment(file: words[1]) : graph.environment
                let account = try user.isEmpty ? nil : SystemdUserManager.Account(name: user)
                let manager = try graph.startUserManager(environment: environment, account: account)
                lock.withLock { userManagers[user] = manager }
                return "ok \(manager.pid)"
            case ("stop-user-manager", 1), ("stop-user-manager", 2):
                stopUserManager(words.count == 2 ? words[1] : "")
            case ("stop", 1):
                stop()
            default:
                throw HarnessError("unknown command '\(words.joined(separator: " "))' (soundscape-bench graph --help lists them)")
            }
            return "ok"
        } catch {
            return Self.failure(error)
        }
    }

    /// A null sink `name`, unless the graph has a node of that name.
    func makeSink(_ name: String) throws {
        if try !graph.nodes().contains(where: { $0.name == name }) {
            try graph.createNullSink(name: name)
        }
        lock.withLock { if !sinks.contains(name) { sinks.append(name) } }
    }

    /// `user`'s manager ("": the caller's) stopped, if it runs.
    func stopUserManager(_ user: String) {
        lock.withLock { userManagers.removeValue(forKey: user) }?.stop()
    }

    /// The user managers, then the graph. Idempotent.
    func stop() {
        for user in lock.withLock({ Array(userManagers.keys) }) { stopUserManager(user) }
        graph.stop()
    }

    /// `error: ` and the message's first line; the whole message goes to stderr.
    static func failure(_ error: Error) -> String {
        let message = String(describing: error)
        FileHandle.standardError.write(Data("soundscape-bench graph: \(message)\n".utf8))
        return "error: \(message.split(separator: "\n").first ?? "")"
    }

    static func daemon(_ name: String) throws -> PipeWireGraph.Daemon {
        guard let daemon = PipeWireGraph.Daemon(rawValue: name) else {
            throw HarnessError("no daemon '\(name)' (pipewire, wireplumber, dbus-daemon)")
        }
        return daemon
    }

    static let signals: [String: Int32] = [
        "HUP": SIGHUP, "INT": SIGINT, "QUIT": SIGQUIT, "KILL": SIGKILL, "TERM": SIGTERM, "STOP": SIGSTOP,
        "CONT": SIGCONT, "USR1": SIGUSR1, "USR2": SIGUSR2, "ABRT": SIGABRT, "SEGV": SIGSEGV,
    ]

    /// `KILL`, `SIGKILL` or `9`.
    static func signal(_ name: String) throws -> Int32 {
        if let number = Int32(name), number > 0, number < 65 { return number }
        let bare = name.hasPrefix("SIG") ? String(name.dropFirst(3)) : name
        guard let number = signals[bare] else { throw HarnessError("no signal '\(name)'") }
        return number
    }

    /// `env -0` output: NUL-separated `KEY=VALUE` entries.
    static func environment(file: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: file) else { throw HarnessError("cannot read \(file)") }
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return environment
    }
}
