#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import NIOCore
import NIOPosix
import SoundscapeCore
import SoundscapeSystem
import Synchronization

/// Starts signer host instances and connects them: stdin (with `signer-stdin =
/// events`, every event as a JSON line from a bounded hub subscription; else
/// /dev/null or a passphrase file), stdout and stderr to the daemon's log,
/// `heartbeat` lines on stdout as liveness proof, and a `NOTIFY_SOCKET` of its own
/// (`SignerNotifySocket`). Runs the health check: the command (`SignerProbe`) off the
/// loop, the HTTP check (`SignerHTTPProbe`) on it, without blocking.
///
/// A child that stops reading never blocks the daemon: its events wait in a
/// bounded queue (`eventQueueLimit`); past that the backlog is dropped, and
/// once the child reads again it first gets a fresh `snapshot` line whose
/// `seq` shows how many events it missed.
final class SignerHost: SignerHosting {
    static let heartbeatLine = "heartbeat"
    static let eventQueueLimit = 1024
    static let maximumLineLength = 64 * 1024

    /// What the next instance starts with; a reload replaces it (see `reconfigure`).
    var configuration: SignerConfiguration { settings.withLock { $0.configuration } }
    private let settings: Mutex<(configuration: SignerConfiguration, environment: [String: String])>
    private let baseEnvironment: [String: String]
    /// The daemon's own `$CREDENTIALS_DIRECTORY` (its unit's `LoadCredential=`), which
    /// `signer-credential = NAME` passes on from; the signer never gets it as it is.
    private let daemonCredentials: String?
    /// The environment the latest instance got, its secrets included: its health command's.
    private let instanceEnvironment = Mutex<[String: String]?>(nil)
    /// Whether a notice said that credentials are written to a disk (once is enough).
    private let toldCredentialsOnDisk = Mutex(false)
    private let socketPath: String
    private let hub: EventHub
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    /// Where its processes are started (see `SignerSpawner`).
    let spawner: SignerSpawner
    var writeExecuteDeniedFromOutside: Bool { spawner.writeExecuteDeniedFromOutside }
    /// The HTTP check's deadline, one timerfd reused by every check (`SignerHTTPProbe.Deadline`),
    /// and the one event loop both are confined to.
    private let httpDeadline = SignerHTTPProbe.Deadline()
    private let httpLoop: any EventLoop
    /// The read end goes to every instance's watcher; the write end stays here
    /// for the daemon's whole life and is never written: its closing is the signal.
    private let lifeline: (read: Int32, write: Int32)

    init(
        configuration: SignerConfiguration, baseEnvironment: [String: String], socketPath: String,
        hub: EventHub, eventLoopGroup: any EventLoopGroup, logger: Logger, spawner: SignerSpawner
    ) throws {
        self.spawner = spawner
        self.baseEnvironment = baseEnvironment
        daemonCredentials = baseEnvironment["CREDENTIALS_DIRECTORY"]
        self.socketPath = socketPath
        settings = Mutex(
            (
                configuration,
                Self.environment(
                    base: baseEnvironment, socketPath: socketPath,
                    configuration: configuration)
            ))
        self.hub = hub
        self.eventLoopGroup = eventLoopGroup
        httpLoop = eventLoopGroup.next()
        self.logger = logger
        lifeline = try Spawn.pipe()
        removeStaleNotifySockets()
    }

    /// Instance `instance`'s notify socket, beside the control socket (whose lock this
    /// daemon holds, so no other daemon uses these names).
    private func notifySocketPath(instance: Int) -> String {
        "\(socketPath).signer-\(instance).notify"
    }

    /// Notify sockets a daemon that crashed left behind.
    private func removeStaleNotifySockets() {
        let directory = FilePaths.parent(socketPath)
        let prefix = String(socketPath.dropFirst(directory.count).drop { $0 == "/" }) + ".signer-"
        for name in FileSystem.entries(of: directory) ?? [] where name.hasPrefix(prefix) && name.hasSuffix(".notify") {
            unlink(FilePaths.join(directory, name))
        }
    }

    /// The environment an instance gets: the daemon's, less systemd's hand-over
    /// variables (ours alone, its credentials included), plus the socket and the
    /// configured variables. (The env files' and `$CREDENTIALS_DIRECTORY` are added
    /// at each start: `SignerSecrets`.)
    private static func environment(
        base: [String: String], socketPath: String,
        configuration: SignerConfiguration
    ) -> [String: String] {
        var environment = base
        for name in [
            "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC", "CREDENTIALS_DIRECTORY",
        ] {
            environment[name] = nil
        }
        environment["SOUNDSCAPED_SOCKET"] = socketPath
        environment.merge(configuration.environment) { $1 }
        return environment
    }

    /// A reloaded configuration: the next instance starts with it; one running now
    /// is not disturbed.
    func reconfigure(_ configuration: SignerConfiguration) {
        let environment = Self.environment(base: baseEnvironment, socketPath: socketPath, configuration: configuration)
        settings.withLock { $0 = (configuration, environment) }
    }

    /// Spawns an instance on the spawner (`SignerSpawner`: the signer's sandbox, none of
    /// the daemon's hardening, and never on the event loop). Nothing of it is watched or
    /// reported until `attach`, so its facts cannot overtake the news that it started.
    func spawn(instance: Int) async throws(SpawnError) -> SpawnedSigner {
        var (configuration, environment) = settings.withLock { $0 }
        // Read now, off the loop: the env files as they are at this start, the credentials written.
        let secrets = try await SignerSecrets.offLoop { [configuration, socketPath, daemonCredentials] () throws(SpawnError) in
            try SignerSecrets.prepare(
                configuration, directory: SignerSecrets.directory(socketPath: socketPath, instance: instance),
                daemonCredentials: daemonCredentials)
        }
        environment.merge(secrets.environment) { $1 }
        if let directory = secrets.credentialsDirectory {
            environment["CREDENTIALS_DIRECTORY"] = directory
            if !secrets.credentialsInMemory, toldCredentialsOnDisk.withLock({ $0.setFirstTime() }) {
                logger.notice("the signer's credentials are written to \(directory), which is not on a tmpfs: they reach the disk there")
            }
        }
        var notify: SignerNotifySocket?
        do {
            let socket = try SignerNotifySocket(path: notifySocketPath(instance: instance))
            environment["NOTIFY_SOCKET"] = socket.path
            notify = socket
        } catch {
            // Degrade: the signer runs, only what it would say that way goes unheard.
            logger.error("the signer gets no NOTIFY_SOCKET: \(error)")
        }
        if let liveness = configuration.machine.livenessTimeout {
            // As systemd's WatchdogSec: sd_watchdog_enabled() reads it (no WATCHDOG_PID: the pid is
            // not known before the spawn, and anything in the group may ping).
            environment["WATCHDOG_USEC"] = "\(liveness.inMicroseconds())"
        }
        let lifeline = self.lifeline.read
        let command = configuration.command
        let workingDirectory = configuration.workingDirectory
        let stdin = configuration.stdin
        do {
            let process = try await spawner.spawn(sandbox: configuration.sandbox) { [environment] in
                try SignerProcess.spawn(
                    command: command, environment: environment, workingDirectory: workingDirectory,
                    stdin: stdin, lifeline: lifeline)
            }
            instanceEnvironment.withLock { $0 = environment }
            return SpawnedSigner(process: process, notify: notify, credentials: secrets.credentialsDirectory)
        } catch {
            notify?.close()
            if let directory = secrets.credentialsDirectory { await Self.removeCredentials(directory) }
            throw error
        }
    }

    /// Watches a spawned instance: its facts arrive through `report` until it has exited.
    func attach(
        _ spawned: SpawnedSigner, instance: Int, report: @escaping @Sendable (SignerFact<SpawnedSigner>) async -> Void
    ) -> RunningSigner {
        let process = spawned.process
        let notify = spawned.notify
        let credentials = spawned.credentials
        notify?.startReading(group: process.group, logger: logger) { notification in
            await report(.notify(instance: instance, notification))
        }
        let instanceLogger = logger
        let hub = self.hub
        let group = eventLoopGroup
        let task = Task {
            await Self.supervise(
                process: process, instance: instance, hub: hub, group: group,
                logger: instanceLogger, notify: notify, credentials: credentials, report: report)
        }
        return RunningSigner(id: instance, process: process, task: task)
    }

    /// Runs the health check once: the built-in HTTP check on the event loop
    /// (`SignerHTTPProbe`), or the health command, with the signer's environment and
    /// working directory, on a thread of its own (`SignerProbe`).
    func probe(timeout: Duration, cancellation: SignerProbe.Cancellation) async -> SignerProbeResult {
        let (configuration, configured) = settings.withLock { $0 }
        if let check = configuration.healthHTTP {
            return await SignerHTTPProbe.run(
                check, timeout: timeout, cancellation: cancellation, deadline: httpDeadline, eventLoop: httpLoop)
        }
        // What the running instance got, its env files' variables and credentials included.
        let environment = instanceEnvironment.withLock { $0 } ?? configured
        guard let healthCommand = configuration.healthCommand else { return .failed("no health check is configured") }
        let spawner = self.spawner
        return await withCheckedContinuation { continuation in
            BlockingThread.start(stackSize: 256 * 1024) {
                continuation.resume(
                    returning: SignerProbe.run(
                        command: healthCommand, environment: environment,
                        workingDirectory: configuration.workingDirectory, timeout: timeout,
                        exitCodes: configuration.healthExitCodes, cancellation: cancellation,
                        sandbox: configuration.sandbox, spawner: spawner))
            }
        }
    }

    private static func supervise(
        process: SignerProcess, instance: Int, hub: EventHub, group: any EventLoopGroup,
        logger: Logger, notify: SignerNotifySocket?, credentials: String?,
        report: @escaping @Sendable (SignerFact<SpawnedSigner>) async -> Void
    ) async {
        let prefix = "signer[\(process.pid)]"
        // A signer that floods its output must not flood the journal: a hundred lines
        // per ten seconds each, then a count of what was held back.
        let stdoutLog = RateLimitedLog(burst: 100, per: .seconds(10)) { logger.info("\(prefix): \($0)") }
        let stderrLog = RateLimitedLog(burst: 100, per: .seconds(10)) { logger.notice("\(prefix) stderr: \($0)") }
        await withTaskGroup(of: Void.self) { tasks in
            // Readers end at EOF, which comes once the whole group is gone.
            tasks.addTask {
                await readLines(from: process.stdoutRead, group: group, logger: logger) { line in
                    if line.split(whereSeparator: \.isWhitespace) == [Substring(heartbeatLine)] {
                        await report(.heartbeat(instance: instance))
                    } else {
                        stdoutLog(line)
                    }
                }
            }
            tasks.addTask {
                await readLines(from: process.stderrRead, group: group, logger: logger) { line in
                    stderrLog(line)
                }
            }
            let pump = process.stdinWrite.map { stdin in
                Task { await pumpEvents(to: stdin, hub: hub, group: group, logger: logger, prefix: prefix) }
            }
            let reason = await process.exitReason
            // The group is gone: nobody is left to notify.
            notify?.close()
            await tasks.waitForAll()
            pump?.cancel()
            await pump?.value
            // Its credentials go with it, before anyone hears that it ended.
            if let credentials { await Self.removeCredentials(credentials) }
            await report(.exited(instance: instance, reason))
        }
    }

    private static func removeCredentials(_ directory: String) async {
        _ = try? await SignerSecrets.offLoop { () throws(SpawnError) in SignerSecrets.remove(directory) }
    }

    /// An instance spawned for nobody (replaced while it started): killed, and its
    /// credentials removed once it has exited.
    func discard(_ spawned: SpawnedSigner) {
        spawned.process.signal(SIGKILL)
        spawned.notify?.close()
        guard let credentials = spawned.credentials else { return }
        Task {
            _ = await spawned.process.exitReason
            await Self.removeCredentials(credentials)
        }
    }

    private static func readLines(
        from fd: Int32, group: any EventLoopGroup, logger: Logger,
        _ body: @escaping @Sendable (String) async -> Void
    ) async {
        do {
            let channel = try await NIOPipeBootstrap(group: group)
                .takingOwnershipOfDescriptor(input: fd) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LineFrameDecoder(maximumLength: maximumLineLength)))
                        return try NIOAsyncChannel<String, Never>(wrappingChannelSynchronously: channel)
                    }
                }
            try await channel.executeThenClose { inbound in
                for try await line in inbound { await body(line) }
            }
        } catch {
            logger.debug("signer output closed", metadata: ["error": "\(error)"])
        }
    }

    /// Writes every event as one JSON line, resubscribing with a snapshot after an overflow.
    private static func pumpEvents(
        to fd: Int32, hub: EventHub, group: any EventLoopGroup, logger: Logger,
        prefix: String
    ) async {
        do {
            let channel = try await NIOPipeBootstrap(group: group)
                .takingOwnershipOfDescriptor(output: fd) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<Never, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            let slowReader = RateLimitedLog(burst: 3, per: .seconds(60)) { logger.warning("\($0)") }
            try await channel.executeThenClose { _, outbound in
                while !Task.isCancelled {
                    let subscription = hub.subscribe(queueLimit: eventQueueLimit) {
                        slowReader("\(prefix) is not reading its events; dropping its backlog (a snapshot follows when it reads again)")
                    }
                    defer { subscription.cancel() }
                    for await published in subscription.events {
                        var line = ByteBuffer(bytes: published.json)
                        line.writeInteger(UInt8(ascii: "\n"))
                        try await outbound.write(line)
                    }
                    guard subscription.overflowed else { return }
                }
            }
        } catch {
            logger.debug("\(prefix) stdin closed", metadata: ["error": "\(error)"])
        }
    }
}

extension Bool {
    /// Sets it; whether it was not set before.
    fileprivate mutating func setFirstTime() -> Bool {
        defer { self = true }
        return !self
    }
}
