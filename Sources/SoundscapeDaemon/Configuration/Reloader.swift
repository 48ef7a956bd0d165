import Logging
import NIOCore
import SoundscapeAudio
import SoundscapeCore
import SoundscapeSystem

/// Reads the config file again (SIGHUP, `Reload()`, `systemctl reload`) under
/// the same command line, and applies what changed to the running daemon:
/// the log level and what counts as a call at once, the cache budget from the
/// next loop cached, soundscape directories from the next list or play, the
/// signer host as `Player.reconfigure` says. A file that does not parse is
/// refused with its line named, and nothing changes.
///
/// systemd sees `RELOADING=1` (with `MONOTONIC_USEC=`) and then `READY=1`.
actor Reloader {
    /// What a reload did.
    enum Outcome: Sendable, Equatable {
        /// The new file was taken; what changed, each with when it takes effect.
        case applied(changes: [String])
        case refused(ConfigurationError)

        static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case (.applied(let a), .applied(let b)): a == b
            case (.refused(let a), .refused(let b)): a.description == b.description
            default: false
            }
        }
    }

    private var settings: DaemonSettings
    /// The setting flags as given, kept for the daemon's life: a reload reads the file again under them.
    private let flags: SettingValues
    private let environment: [String: String]
    private let executablePath: String
    private let player: Player
    private let output: PipeWireOutput
    private let systemd: SystemdNotifierService
    private let makeSignerHost: @Sendable (SignerConfiguration) throws -> SignerHost
    private let logger: Logger

    init(
        settings: DaemonSettings, flags: SettingValues, environment: [String: String],
        executablePath: String, player: Player, output: PipeWireOutput, systemd: SystemdNotifierService,
        logger: Logger, makeSignerHost: @escaping @Sendable (SignerConfiguration) throws -> SignerHost
    ) {
        self.settings = settings
        self.flags = flags
        self.environment = environment
        self.executablePath = executablePath
        self.player = player
        self.output = output
        self.systemd = systemd
        self.logger = logger
        self.makeSignerHost = makeSignerHost
    }

    /// Reloads; `reason` says who asked (for the log).
    func reload(reason: String) async -> Outcome {
        let announced = systemd.reloadBegins()
        let outcome = await apply(reason: reason)
        if announced { systemd.reloadEnded() }
        return outcome
    }

    private func apply(reason: String) async -> Outcome {
        let new: DaemonSettings
        do {
            // Reading and parsing the file is a disk access: the worker thread's job, not the event loop's.
            new = try await player.loader.worker.run { [flags, environment, executablePath] in
                Result { () throws(ConfigurationError) in
                    try DaemonSettings.resolve(flags: flags, environment: environment, executablePath: executablePath)
                }
            }.get()
        } catch {
            logger.error("reload (\(reason)) refused, the old settings stay: \(error)")
            return .refused(error)
        }
        let changes = settings.changes(to: new)
        DaemonLogHandler.level = new.logLevel
        output.setCallDetection(new.output.callDetection)
        output.setCacheBudget(bytes: new.output.pcmCacheBudgetBytes)
        let problem = await player.reconfigure(locations: new.soundscapes, signer: new.signer, makeHost: makeSignerHost)
        if let problem {
            logger.error("reload (\(reason)): \(problem)")
        }
        settings = new
        let file = new.configPath ?? "no config file"
        if changes.isEmpty {
            logger.notice("reloaded \(file) (\(reason)): nothing changed")
        } else {
            logger.notice("reloaded \(file) (\(reason)): \(changes.joined(separator: "; "))")
        }
        return .applied(changes: changes + (problem.map { ["not applied: \($0)"] } ?? []))
    }
}
