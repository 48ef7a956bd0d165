#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

/// Everything the daemon needs to know, resolved from flags and environment.
public struct DaemonOptions: Sendable {
    public var socketPath: String
    public var stateDirectory: String
    public var soundscapes: SoundscapeCatalog.Locations
    public var logLevel: Logger.Level
    public var output: OutputConfiguration
    /// Events a subscriber may fall behind before it is dropped.
    public var subscriberQueueLimit: Int
    /// The signer host to keep alive, if any.
    public var signer: SignerConfiguration?
    /// Whether the pages only startup touched are unmapped once the daemon is up (`StartupPages`).
    public var releaseStartupPages: Bool

    public init(socketPath: String, stateDirectory: String, soundscapes: SoundscapeCatalog.Locations,
                logLevel: Logger.Level = .info, output: OutputConfiguration = OutputConfiguration(),
                subscriberQueueLimit: Int = 256, signer: SignerConfiguration? = nil,
                releaseStartupPages: Bool = true) {
        self.signer = signer
        self.releaseStartupPages = releaseStartupPages
        self.socketPath = socketPath
        self.stateDirectory = stateDirectory
        self.soundscapes = soundscapes
        self.logLevel = logLevel
        self.output = output
        self.subscriberQueueLimit = subscriberQueueLimit
    }
}

/// Builds the daemon's parts and runs them in one ServiceGroup until SIGTERM/SIGINT.
public enum Daemon {
    public static let version = "0.1.0"

    /// `signals` says who turns SIGTERM/SIGINT into a graceful shutdown. The sockets
    /// and the signer's pipes share the event loop Swift concurrency runs on when
    /// `EventLoopConcurrency` is installed, else get a one-thread group of their own.
    public static func run(options: DaemonOptions, environment: [String: String],
                           signals: ShutdownSignals = .serviceLifecycle) async throws {
        let journal = DaemonLogHandler.stderrIsJournal(environment: environment)
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, level: options.logLevel, journal: journal)
        }
        let logger = Logger(label: "soundscaped")
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
        let output = PipeWireOutput(configuration: options.output, logger: Logger(label: "soundscaped.audio"),
                                    events: outputSink)
        let hub = EventHub(initialStatus: nil)
        let ownGroup = EventLoopConcurrency.isInstalled ? nil : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let eventLoopGroup: any EventLoopGroup = ownGroup ?? EventLoopConcurrency.eventLoopGroup
        let signerHost = try options.signer.map {
            try SignerHost(configuration: $0, baseEnvironment: environment, socketPath: options.socketPath, hub: hub,
                           eventLoopGroup: eventLoopGroup, logger: Logger(label: "soundscaped.signer"))
        }
        // Files, SQLite: everything that may wait for a disk runs here, never on the event loop.
        let worker = WorkerThread(name: "soundscaped-io")
        let player = Player(.init(output: output, outputEvents: outputEvents, outputEventSink: outputSink, store: store,
                                  locations: options.soundscapes, hub: hub, worker: worker,
                                  logger: Logger(label: "soundscaped.player")),
                            signerHost: signerHost)

        let controlLogger = Logger(label: "soundscaped.control")
        let server = VarlinkServer(
            listener: listener,
            interfaces: [PlayerInterface(player: player, hub: hub, worker: worker,
                                         subscriberQueueLimit: options.subscriberQueueLimit)],
            info: .init(vendor: "soundscaped", product: "soundscaped", version: version,
                        url: "https://github.com/soundscaped/soundscaped"),
            eventLoopGroup: eventLoopGroup,
            logger: { controlLogger.warning("\($0)") })
        let systemd = SystemdNotifierService(environment: environment, logger: Logger(label: "soundscaped.systemd")) {
            [player] in
            // Only our own loops: PipeWire being away is reported in STATUS, never by withholding
            // pings, since a restart cannot bring it back.
            await PlayerHealth.firstAnswer(within: .seconds(2)) { await player.ping() } ?? false
        }
        let socketPath = options.socketPath
        let control = ControlService(server: server) {
            controlLogger.info("listening", metadata: ["socket": "\(socketPath)"])
            systemd.markReady(status: hub.latest.status.map { SystemdStatusLine.text(for: $0) } ?? "Listening")
            // Second: what connecting to PipeWire and binding the socket ran.
            if options.releaseStartupPages { StartupPages.release(logger: controlLogger) }
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: PlayerService(player: player)), .init(service: control),
        ]
        if SystemdNotifier(environment: environment, logger: logger).isEnabled {
            services.append(.init(service: StatusLineService(hub: hub, systemd: systemd)))
        }
        // Last: the group stops services in reverse order, so STOPPING=1 goes out first.
        services.append(.init(service: systemd))

        if case .external(let request) = signals {
            // First, so it is the last to stop; its ending (a signal) shuts the group down.
            services.insert(.init(service: ShutdownRequestService(request: request),
                                  successTerminationBehavior: .gracefullyShutdownGroup), at: 0)
        }
        let libraryHandlesSignals = if case .serviceLifecycle = signals { true } else { false }
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: libraryHandlesSignals ? [.sigterm, .sigint] : [],
            logger: logger))
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
