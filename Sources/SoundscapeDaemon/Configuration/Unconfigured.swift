import Glibc
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SoundscapeCore
import SoundscapeSystem
import Synchronization
import Varlink

/// The daemon, socket-activated, with a configuration it cannot use (a typo, a value
/// out of range, a passphrase file it may not read, in the file or in the flags its
/// unit's `ExecStart` gives it): rather than exit, to be restarted
/// by systemd every 2 s forever while clients wait on a socket nobody serves, it stays
/// up *not configured*:
///
/// - it serves the control socket, and answers every call with
///   `io.soundscaped.Player.NotConfigured`, whose reason names the file and the line, so `soundscapectl` prints it and exits 1 at once, and the desktop companion
///   raises one notification saying the same;
/// - it tells systemd it is ready, with the problem as its status line, and feeds the
///   watchdog: a restart cannot mend a file;
/// - it reads the configuration again when the file changes (inotify), on reload
///   (SIGHUP, `Reload()`, `systemctl --user reload`) and before answering each call (a
///   passphrase file made private is no change of the config file), each time from the
///   same command line (a flag refused stays refused: only a start with other flags, or a
///   file that no longer needs mending, changes the answer). Once it resolves,
///   the daemon starts itself again with it, in the same process (`SelfExec`), keeping
///   the socket: it stops accepting first, then a call that found the file mended is
///   answered `io.soundscaped.Player.Restarting` (the server's graceful shutdown waits
///   for that answer), and the client asks again, on a new connection that waits in the
///   socket's backlog for the daemon now configured. No `systemctl reset-failed` is ever
///   needed.
///
/// Run by hand (not socket-activated), the daemon exits 1 with the message instead:
/// its user is at the terminal.
public enum UnconfiguredDaemon {
    public enum Outcome: Sendable {
        /// The configuration resolves now: start again with it (`SelfExec`), keeping this socket.
        case restart(listener: Int32)
        /// SIGTERM or SIGINT: exit.
        case stopped
    }

    public static func run(
        problem: ConfigurationError, arguments: [String], environment: [String: String], executablePath: String,
        signals: DaemonSignals
    ) async throws -> Outcome {
        // Where the socket, the state and the file are: the flags as far as they parse (a value refused is no place).
        let flags = CommandLineSettings.parseLeniently(arguments)
        let journal = DaemonLogHandler.stderrIsJournal(environment: environment)
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, journal: journal) }
        let logger = Logger(label: "soundscaped")
        guard let socketPath = DaemonPaths.socket(explicit: flags[Settings.socket], environment: environment),
            let stateDirectory = DaemonPaths.stateDirectory(explicit: flags[Settings.stateDirectory], environment: environment),
            case .success(let sockets?) = SocketActivation.listeners(environment: environment, pid: getpid())
        else { throw problem }
        let locks = try Daemon.lockInstance(socketPath: socketPath, stateDirectory: stateDirectory, logger: logger)
        defer { withExtendedLifetime(locks) {} }
        SocketActivation.unsetEnvironment()
        // The server gets a descriptor of its own, which it closes when it stops; the one
        // systemd passed stays where it is, for the new image. Never closed meanwhile, its
        // number is never another file's, so no thread still opening and closing files
        // (a read of the configuration in flight) can close it by mistake.
        let serving = dup(sockets.control)
        guard serving >= 0 else { throw problem }
        logger.error("not configured: \(problem); answering every call with it until the configuration is mended")

        let systemd = SystemdNotifierService(environment: environment, logger: Logger(label: "soundscaped.systemd")) { true }
        let controller = UnconfiguredController(
            problem: problem, arguments: arguments, environment: environment, executablePath: executablePath,
            systemd: systemd, logger: logger)
        let server = VarlinkServer(
            listener: .boundFileDescriptor(serving),
            interfaces: [UnconfiguredInterface(controller: controller)],
            info: .init(
                vendor: "soundscaped", product: "soundscaped", version: SoundscapedVersion.string,
                url: "https://github.com/soundscaped/soundscaped"),
            eventLoopGroup: EventLoopConcurrency.isInstalled ? EventLoopConcurrency.eventLoopGroup : MultiThreadedEventLoopGroup.singleton,
            limits: .init(allowedUIDs: [UInt32(getuid()), 0]))
        await controller.attach(server)
        let control = ControlService(server: server) {
            systemd.markReady(status: UnconfiguredController.statusLine(problem))
        }
        let watch = DaemonSettings.configPath(flags: flags, environment: environment).flatMap { path in
            FileChangeWatch(path: path) { Task { await controller.recheck(reason: "the config file changed") } }
        }
        defer { watch?.stop() }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: ShutdownRequestService(request: signals.shutdown), successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: controller, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: control),
                    .init(service: UnconfiguredReloadService(request: signals.reload, controller: controller)),
                    .init(service: systemd),
                ], gracefulShutdownSignals: [], logger: logger))
        try await group.run()
        guard await controller.restarting else {
            close(sockets.control)
            return .stopped
        }
        return .restart(listener: sockets.control)
    }
}

/// What the not-configured daemon knows: the problem now, and whether the configuration
/// resolves at last. As a service, it ends (and so ends the group) once it does.
actor UnconfiguredController: Service {
    private(set) var problem: ConfigurationError
    private(set) var restarting = false
    /// The setting flags as given, resolved anew each time exactly as at the start.
    private let arguments: [String]
    private let environment: [String: String]
    private let executablePath: String
    private let systemd: SystemdNotifierService
    private let logger: Logger
    /// Reading the file (and the files it names) is a disk access: never on the event loop.
    private let worker = WorkerThread(name: "soundscaped-io")
    private var resolved: CheckedContinuation<Void, Never>?
    /// The control socket's server, which stops accepting before anyone hears `Restarting`.
    private var server: VarlinkServer?
    /// The server stopping to accept, once the configuration resolves.
    private var stoppingServer: Task<Void, Never>?

    init(
        problem: ConfigurationError, arguments: [String], environment: [String: String], executablePath: String,
        systemd: SystemdNotifierService, logger: Logger
    ) {
        self.problem = problem
        self.arguments = arguments
        self.environment = environment
        self.executablePath = executablePath
        self.systemd = systemd
        self.logger = logger
    }

    static func statusLine(_ problem: ConfigurationError) -> String {
        "Not configured: \(problem); mend it and it starts"
    }

    func attach(_ server: VarlinkServer) {
        self.server = server
    }

    /// Reads the configuration again: true once it resolves, and then only once the
    /// control socket's server accepts no more connections, so that a client told
    /// `Restarting` that connects again reaches the new image, not this one on its way out.
    @discardableResult
    func recheck(reason: String) async -> Bool {
        guard !restarting else { return await serverStopped() }
        let result = await worker.run { [arguments, environment, executablePath] in
            Result { () throws(ConfigurationError) in
                try DaemonSettings.resolve(arguments: arguments, environment: environment, executablePath: executablePath)
            }
        }
        switch result {
        case .success:
            guard !restarting else { return await serverStopped() }
            restarting = true
            logger.notice("the configuration resolves now (\(reason)); starting with it")
            stoppingServer = Task { [server] in await server?.shutDownGracefully() }
            systemd.handOver()
            await stoppingServer?.value
            resolved?.resume()
            resolved = nil
            return true
        case .failure(let error):
            // A read that began before another resolved, and met the file mid-change.
            guard !restarting else { return await serverStopped() }
            if error.description != problem.description {
                logger.error("still not configured (\(reason)): \(error)")
                problem = error
                systemd.setStatus(Self.statusLine(error))
            }
            return false
        }
    }

    /// True (the configuration resolved), once the server has stopped accepting.
    private func serverStopped() async -> Bool {
        await stoppingServer?.value
        return true
    }

    /// Ends once the configuration resolves (or the group shuts down).
    func run() async {
        await withGracefulShutdownHandler {
            await withCheckedContinuation { continuation in
                if restarting { continuation.resume() } else { resolved = continuation }
            }
        } onGracefulShutdown: {
            Task { await self.stopWaiting() }
        }
    }

    private func stopWaiting() {
        resolved?.resume()
        resolved = nil
    }
}

/// SIGHUP: read the configuration again.
struct UnconfiguredReloadService: Service {
    let request: ExternalRequest
    let controller: UnconfiguredController

    func run() async {
        await withGracefulShutdownHandler {
            for await _ in request.requests { await controller.recheck(reason: "SIGHUP") }
        } onGracefulShutdown: {
            request.finish()
        }
    }
}

/// `io.soundscaped.Player`, not configured: every call is answered with the problem,
/// after one more look at the configuration.
struct UnconfiguredInterface: VarlinkInterface {
    let name = PlayerInterfaceDefinition.name
    let description = PlayerInterfaceDefinition.idl
    let controller: UnconfiguredController

    func handle(_ call: VarlinkCall) async throws {
        let resolves = await controller.recheck(reason: "a call to \(call.unqualifiedMethod)")
        if resolves {
            if call.unqualifiedMethod == "Reload" {
                try await call.reply(ReloadReply(changes: ["the configuration resolves now: soundscaped starts again with it"]))
                return
            }
            throw PlayerErrors.restarting
        }
        throw PlayerErrors.notConfigured(await controller.problem.description)
    }
}
