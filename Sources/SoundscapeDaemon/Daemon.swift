#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSoundscapeSystem
import Glibc
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeStore
import SoundscapeSystem
import Varlink

/// Builds the daemon's parts and runs them in one ServiceGroup until SIGTERM/SIGINT.
public enum Daemon {
    public static let version = SoundscapedVersion.string
    /// Events a subscriber may fall behind before it is dropped.
    static let subscriberQueueLimit = 256

    /// Runs with `settings`, made from the setting flags `flags` (kept for reloads). `signals`
    /// carries the requests the main thread makes of SIGTERM/SIGINT (shutdown)
    /// and SIGHUP (reload). The sockets and the signer's pipes share the event
    /// loop Swift concurrency runs on when `EventLoopConcurrency` is installed,
    /// else get a one-thread group of their own.
    public static func run(
        settings: DaemonSettings, flags: SettingValues, environment: [String: String],
        executablePath: String, signals: DaemonSignals, spawner: SignerSpawner = .unhardened,
        hardening: String? = "not applied (not started by main.swift)"
    ) async throws {
        let options = settings
        let journal = DaemonLogHandler.stderrIsJournal(environment: environment)
        DaemonLogHandler.level = settings.logLevel
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, journal: journal)
        }
        let logger = Logger(label: "soundscaped")
        if let hardening {
            logger.warning("writable-and-executable memory is not denied to the daemon: \(hardening)")
        } else {
            logger.debug("writable-and-executable memory is denied to every thread but the signer's spawner")
        }
        // One daemon per socket and per state directory, decided before either is touched.
        let locks = try lockInstance(socketPath: settings.socketPath, stateDirectory: settings.stateDirectory, logger: logger)
        defer { withExtendedLifetime(locks) {} }
        // Socket activation first, and its variables out of the environment before any
        // thread or child could see them: they are ours alone.
        let activation = SocketActivation.listeners(environment: environment, pid: getpid())
        SocketActivation.unsetEnvironment()
        let listener: VarlinkServer.Listener
        switch activation {
        case .success(let sockets?):
            listener = .boundFileDescriptor(sockets.control)
            logger.info("using the control socket passed by systemd")
        case .success(nil):
            listener = .unixPath(options.socketPath)
        case .failure(let error):
            // Binding the path ourselves would fight systemd's socket; refuse instead.
            logger.critical("socket activation failed: \(error)")
            throw error
        }
        raiseFileLimit(logger: logger)

        let store: StateStore?
        do {
            store = try StateStore(directory: options.stateDirectory)
        } catch {
            logger.error("\(error); preferences will not be saved this run")
            store = nil
        }

        let (outputEvents, outputSink) = AsyncStream.makeStream(of: AudioOutputEvent.self)
        let output = PipeWireOutput(
            configuration: options.output, logger: Logger(label: "soundscaped.audio"),
            events: outputSink)
        // Connecting needs nothing else: the output's thread does it while the rest is set up and
        // the saved state is read (Player.run starts it too; a second start does nothing).
        output.start()
        let hub = EventHub(initialStatus: nil)
        let ownGroup = EventLoopConcurrency.isInstalled ? nil : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let eventLoopGroup: any EventLoopGroup = ownGroup ?? EventLoopConcurrency.eventLoopGroup
        // Credentials a daemon that crashed left for its signer (whether or not one is configured now).
        SignerSecrets.removeStale(besideSocket: options.socketPath)
        let makeSignerHost: @Sendable (SignerConfiguration) throws -> SignerHost = { configuration in
            try SignerHost(
                configuration: configuration, baseEnvironment: environment, socketPath: options.socketPath,
                hub: hub, eventLoopGroup: eventLoopGroup, logger: Logger(label: "soundscaped.signer"), spawner: spawner)
        }
        let signerHost = try options.signer.map(makeSignerHost)
        // Soundscape files (scans, opens, hashes), the list's encoding, a reload's file: what may
        // wait for a disk runs here, never on the event loop. SQLite has its own (StateKeeper).
        let worker = WorkerThread(name: "soundscaped-io")
        let player = Player(
            .init(
                output: output, outputEvents: outputEvents, outputEventSink: outputSink, store: store,
                locations: options.soundscapes, hub: hub, worker: worker,
                logger: Logger(label: "soundscaped.player"),
                clock: EventLoopClock(eventLoop: eventLoopGroup.next()), environment: environment,
                fingerprintDirectory: options.output.pcmCacheDirectory),
            signerHost: signerHost)

        let systemd = SystemdNotifierService(environment: environment, logger: Logger(label: "soundscaped.systemd")) {
            [player] in
            // Only our own loops: PipeWire being away is reported in STATUS, never by withholding
            // pings, since a restart cannot bring it back.
            await PlayerHealth.firstAnswer(within: .seconds(2)) { await player.ping() } ?? false
        }
        let reloader = Reloader(
            settings: settings, flags: flags, environment: environment,
            executablePath: executablePath, player: player, output: output, systemd: systemd,
            logger: Logger(label: "soundscaped.reload"), makeSignerHost: makeSignerHost)

        let controlLogger = Logger(label: "soundscaped.control")
        // Clients can trigger these at will (a flood of connections): ten a minute, then a count.
        let controlWarnings = RateLimitedLog { controlLogger.warning("\($0)") }
        let server = VarlinkServer(
            listener: listener,
            interfaces: [
                PlayerInterface(
                    player: player, hub: hub, worker: worker,
                    subscriberQueueLimit: subscriberQueueLimit, reloader: reloader)
            ],
            info: .init(
                vendor: "soundscaped", product: "soundscaped", version: version,
                url: "https://github.com/soundscaped/soundscaped"),
            eventLoopGroup: eventLoopGroup,
            logger: { controlWarnings($0) },
            limits: .init(allowedUIDs: [UInt32(getuid()), 0]),
            onDrained: {
                // A burst of clients came and went: what they took is free, but glibc keeps freed
                // heap for reuse, and after a few thousand connections that is tens of MB held for
                // days. Give it back (a heap walk of a few ms: the worker's job, not the loop's).
                worker.submit { _ = scs_malloc_trim(0) }
            })
        let socketPath = options.socketPath
        let control = ControlService(server: server) {
            controlLogger.info("listening", metadata: ["socket": "\(socketPath)"])
            systemd.markReady(status: hub.latest.status.map { SystemdStatusLine.text(for: $0) } ?? "Listening")
            // Second: what connecting to PipeWire, reading the saved state and binding the socket
            // ran. On a thread of its own at idle priority: unmapping, and the faults that bring
            // back what still runs, must not stand between a restored session and its sound
            // (the restore usually ends about now, and a restart after a crash is timed to sound).
            if options.releaseStartupPages {
                BlockingThread.start {
                    WorkerThread.setCallingThreadPolicy(.idle)
                    StartupPages.release(logger: controlLogger)
                }
            }
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            // First, so it is the last to stop; its ending (a signal) shuts the group down.
            .init(service: ShutdownRequestService(request: signals.shutdown), successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: PlayerService(player: player)), .init(service: control),
            .init(service: ReloadService(request: signals.reload, reloader: reloader)),
        ]
        if SystemdNotifier(environment: environment, logger: logger).isEnabled {
            services.append(.init(service: StatusLineService(hub: hub, systemd: systemd)))
        }
        // Last: the group stops services in reverse order, so STOPPING=1 goes out first.
        services.append(.init(service: systemd))

        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], logger: logger))
        // First: the command line, the store, the catalog, the loader (see StartupPages).
        if options.releaseStartupPages { StartupPages.release(logger: logger) }
        do {
            try await group.run()
        } catch {
            try? await ownGroup?.shutdownGracefully()
            throw error
        }
        try? await ownGroup?.shutdownGracefully()
    }

    /// The locks beside the socket and in the state directory (see `InstanceLock`);
    /// another daemon holding either stops this one (exit status 1), naming its pid.
    static func lockInstance(socketPath: String, stateDirectory: String, logger: Logger) throws -> [InstanceLock] {
        var locks: [InstanceLock] = []
        let socketDirectory = FilePaths.parent(socketPath)
        _ = Directories.make(socketDirectory, mode: 0o700)
        _ = Directories.make(stateDirectory, mode: 0o700)
        for path in [socketPath + ".lock", FilePaths.join(stateDirectory, "lock")] {
            do {
                if let lock = try InstanceLock.acquire(path) {
                    locks.append(lock)
                } else {
                    logger.warning("cannot create the lock file \(path); another daemon could use the same files")
                }
            } catch {
                // Said once, by the error's "Error: soundscaped is already running (pid N, …)".
                throw ConfigurationError("soundscaped is \(error)")
            }
        }
        return locks
    }

    /// Hundreds of subscribers each hold a socket; the usual soft limit of 1024
    /// descriptors is lifted to the hard limit.
    private static func raiseFileLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            logger.debug("could not raise the open-file limit")
        }
    }
}
