import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem

/// The daemon's command line as given: what the user set, nil (or empty) where
/// a flag was not given. Kept for the daemon's whole life, so that a reload
/// (SIGHUP, `Reload()`) reads the config file again under the same flags.
public struct CommandLineOptions: Sendable {
    public var socket: String?
    public var stateDirectory: String?
    public var soundscapeDirectories: [String] = []
    public var cacheDirectory: String?
    public var cacheSize: Int?
    public var logLevel: String?
    public var latencyFrames = 2048
    public var config: String?
    public var signerCommand: String?
    public var signerDirectory: String?
    public var signerEnvironment: [String] = []
    public var signerKeepRunning = false
    public var signerStopTimeout: String?
    public var signerLivenessTimeout: String?
    public var signerRestartDelay: String?
    public var signerCrashLimit: String?
    public var signerStdin: String?
    public var signerStopSignal: String?
    public var signerType: String?
    public var signerRestartMaxDelay: String?
    public var signerHealthCommand: String?
    public var signerHealthInterval: String?
    public var signerHealthTimeout: String?
    public var signerHealthRetries: String?
    public var signerRestartOnUnhealthy: String?
    public var signerStartGrace: String?
    public var interruptionRoles: String?
    public var voipApplications: String?
    public var keepStartupPages = false

    public init() {}
}

/// A bad config file or signer option: the daemon refuses to start (exit status
/// 1), or a reload refuses the new file and keeps the old settings; either way
/// the problem is named, with its line.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Everything the daemon runs with: the command line over the config file over
/// the defaults. See docs/configuration.md for every key and when it takes effect.
public struct DaemonSettings: Sendable {
    public var socketPath: String
    public var stateDirectory: String
    public var soundscapes: SoundscapeCatalog.Locations
    public var logLevel: Logger.Level
    public var output: OutputConfiguration
    public var signer: SignerConfiguration?
    /// Where the config file was read from (nil: no file, the default one being absent).
    public var configPath: String?
    public var releaseStartupPages: Bool

    /// Resolves `commandLine` against the environment and the config file it
    /// names (or the default one, which may be absent).
    public static func resolve(
        _ commandLine: CommandLineOptions, environment: [String: String],
        executablePath: String
    ) throws(ConfigurationError) -> DaemonSettings {
        guard let socketPath = DaemonPaths.socket(explicit: commandLine.socket, environment: environment) else {
            throw ConfigurationError("XDG_RUNTIME_DIR is not set: pass --socket PATH or set SOUNDSCAPED_SOCKET")
        }
        guard let stateDirectory = DaemonPaths.stateDirectory(explicit: commandLine.stateDirectory, environment: environment) else {
            throw ConfigurationError("neither XDG_STATE_HOME nor HOME is set: pass --state-dir DIR")
        }
        let (file, configPath) = try configFile(commandLine.config, environment: environment)

        var output = OutputConfiguration()
        output.latencyFrames = commandLine.latencyFrames
        switch commandLine.cacheDirectory {
        case "none": output.pcmCacheDirectory = nil
        case let explicit? where !explicit.isEmpty: output.pcmCacheDirectory = explicit
        default: output.pcmCacheDirectory = DaemonPaths.cacheDirectory(environment: environment).map { $0 + "/pcm" }
        }
        if let size = commandLine.cacheSize ?? file.cacheSize { output.pcmCacheBudgetBytes = Int64(size) << 20 }
        if let roles = commandLine.interruptionRoles.map(ConfigFile.list) ?? file.interruptionRoles {
            output.callDetection.roles = roles
        }
        if let apps = commandLine.voipApplications.map(ConfigFile.list) ?? file.voipApplications {
            output.callDetection.applications = apps
        }
        let levelName = commandLine.logLevel ?? file.logLevel ?? "info"
        guard let logLevel = Logger.Level(rawValue: levelName) else {
            throw ConfigurationError("unknown log level '\(levelName)'")
        }
        return DaemonSettings(
            socketPath: socketPath, stateDirectory: stateDirectory,
            soundscapes: .standard(
                extra: file.soundscapeDirectories + commandLine.soundscapeDirectories,
                environment: environment, executablePath: executablePath),
            logLevel: logLevel, output: output, signer: try signer(commandLine, file: file),
            configPath: configPath, releaseStartupPages: !commandLine.keepStartupPages)
    }

    /// The config file (empty when the default one does not exist). A bad one is an error naming its line.
    private static func configFile(_ explicit: String?, environment: [String: String]) throws(ConfigurationError)
        -> (ConfigFile, String?)
    {
        let path: String?
        if let explicit {
            path = explicit
        } else if let home = environment["XDG_CONFIG_HOME"], home.hasPrefix("/") {
            path = home + "/soundscaped/soundscaped.conf"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            path = home + "/.config/soundscaped/soundscaped.conf"
        } else {
            path = nil
        }
        guard let path else { return (ConfigFile(), nil) }
        guard let text = FileSystem.text(of: path) else {
            if explicit != nil || FileSystem.exists(path) {
                throw ConfigurationError("cannot read the config file \(path)")
            }
            return (ConfigFile(), nil)
        }
        do {
            return (try ConfigFile(parsing: text, checkFile: StdinFile.problem), path)
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
    }

    /// The signer host from the config file, with command-line flags taking precedence.
    private static func signer(_ commandLine: CommandLineOptions, file: ConfigFile) throws(ConfigurationError)
        -> SignerConfiguration?
    {
        do {
            return try signerConfiguration(commandLine, file: file)
        } catch {
            throw ConfigurationError(error.message)
        }
    }

    /// A flag's value parsed as the file's would be, its errors naming the flag.
    private static func flag<Value>(
        _ text: String?, _ name: String,
        _ parse: (String, String, Int) throws(ConfigFile.ParseError) -> Value
    )
        throws(ConfigFile.ParseError) -> Value?
    {
        guard let text else { return nil }
        return try parse(text, "--" + name, 0)
    }

    private static func signerConfiguration(_ commandLine: CommandLineOptions, file: ConfigFile)
        throws(ConfigFile.ParseError) -> SignerConfiguration?
    {
        let seconds = ConfigFile.seconds
        guard let command = try flag(commandLine.signerCommand, "signer-command", ConfigFile.command) ?? file.signerCommand
        else { return nil }
        var configuration = SignerConfiguration(command: command)
        configuration.workingDirectory = commandLine.signerDirectory ?? file.signerDirectory
        configuration.environment = file.signerEnvironment
        for assignment in commandLine.signerEnvironment {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ConfigFile.ParseError(line: 0, message: "--signer-env expects NAME=VALUE, got '\(assignment)'")
            }
            configuration.environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        configuration.keepRunningWhenStopped = commandLine.signerKeepRunning || (file.signerKeepRunning ?? false)
        if let stdin = try flag(commandLine.signerStdin, "signer-stdin", ConfigFile.stdin) {
            if case .file(let path) = stdin, let problem = StdinFile.problem(path) {
                throw ConfigFile.ParseError(line: 0, message: "--signer-stdin \(stdin): \(problem)")
            }
            configuration.stdin = stdin
        } else if let stdin = file.signerStdin {
            configuration.stdin = stdin
        }
        if let signal = try flag(commandLine.signerStopSignal, "signer-stop-signal", ConfigFile.stopSignal) ?? file.signerStopSignal {
            configuration.stopSignal = signal
        }
        if let timeout = try flag(commandLine.signerStopTimeout, "signer-stop-timeout", seconds) ?? file.signerStopTimeout {
            configuration.stopTimeout = timeout
        }
        configuration.livenessTimeout =
            try flag(commandLine.signerLivenessTimeout, "signer-liveness-timeout", seconds)
            ?? file.signerLivenessTimeout
        if let type = try flag(commandLine.signerType, "signer-type", ConfigFile.signerType) ?? file.signerType {
            configuration.type = type
        }
        if let delay = try flag(commandLine.signerRestartDelay, "signer-restart-delay", seconds) ?? file.signerRestartDelay {
            configuration.restartDelay = delay
        }
        if let delay = try flag(commandLine.signerRestartMaxDelay, "signer-restart-max-delay", seconds)
            ?? file.signerRestartMaxDelay
        {
            configuration.restartMaximumDelay = delay
        }
        if let limit = try flag(commandLine.signerCrashLimit, "signer-crash-limit", ConfigFile.crashLimit) ?? file.signerCrashLimit {
            configuration.crashLoopLimit = limit
        }
        if let grace = try flag(commandLine.signerStartGrace, "signer-start-grace", seconds) ?? file.signerStartGrace {
            configuration.startGrace = grace
        }
        if let healthCommand = try flag(commandLine.signerHealthCommand, "signer-health-command", ConfigFile.command)
            ?? file.signerHealthCommand
        {
            var check = SignerHealthCheck(command: healthCommand)
            if let interval = try flag(commandLine.signerHealthInterval, "signer-health-interval", seconds)
                ?? file.signerHealthInterval
            {
                check.interval = interval
            }
            if let timeout = try flag(commandLine.signerHealthTimeout, "signer-health-timeout", seconds)
                ?? file.signerHealthTimeout
            {
                check.timeout = timeout
            }
            if let count = try flag(commandLine.signerHealthRetries, "signer-health-retries", ConfigFile.healthRetries)
                ?? file.signerHealthRetries
            {
                check.retries = count
            }
            if let restart = try flag(commandLine.signerRestartOnUnhealthy, "signer-restart-on-unhealthy", ConfigFile.bool)
                ?? file.signerRestartOnUnhealthy
            {
                check.restartOnUnhealthy = restart
            }
            configuration.healthCheck = check
        }
        return configuration
    }

    /// What a reload to `new` changes, in words for the log ("what changed"),
    /// each saying when it takes effect.
    public func changes(to new: DaemonSettings) -> [String] {
        var changes: [String] = []
        if logLevel != new.logLevel { changes.append("log-level \(logLevel) → \(new.logLevel) (now)") }
        if output.callDetection.roles != new.output.callDetection.roles {
            changes.append("interruption-roles → \(new.output.callDetection.roles.sorted().joined(separator: ", ")) (now)")
        }
        if output.callDetection.applications != new.output.callDetection.applications {
            changes.append("voip-apps → \(new.output.callDetection.applications.sorted().joined(separator: ", ")) (now)")
        }
        if output.pcmCacheBudgetBytes != new.output.pcmCacheBudgetBytes {
            changes.append("cache-size \(output.pcmCacheBudgetBytes >> 20) → \(new.output.pcmCacheBudgetBytes >> 20) MiB (the next loop cached)")
        }
        if soundscapes.extra != new.soundscapes.extra {
            changes.append(
                "soundscapes-dir → \(new.soundscapes.extra.isEmpty ? "none" : new.soundscapes.extra.joined(separator: ", ")) (the next list or play)")
        }
        switch (signer, new.signer) {
        case (nil, nil):
            break
        case (nil, _?):
            changes.append("a signer host is configured (it starts with the next session, or now if one runs)")
        case (_?, nil):
            changes.append("the signer host is no longer configured (it stops now)")
        case (let old?, let new?):
            if old.command != new.command { changes.append("signer-command (the signer's next start)") }
            if old.workingDirectory != new.workingDirectory { changes.append("signer-directory (the signer's next start)") }
            if old.environment != new.environment { changes.append("signer-env (the signer's next start)") }
            if old.keepRunningWhenStopped != new.keepRunningWhenStopped {
                changes.append("signer-keep-running → \(new.keepRunningWhenStopped) (now)")
            }
            if old.stopTimeout != new.stopTimeout { changes.append("signer-stop-timeout → \(new.stopTimeout) (now)") }
            if old.livenessTimeout != new.livenessTimeout {
                changes.append("signer-liveness-timeout → \(new.livenessTimeout.map { "\($0)" } ?? "none") (now)")
            }
            if old.restartDelay != new.restartDelay { changes.append("signer-restart-delay → \(new.restartDelay) (now)") }
            if old.crashLoopLimit != new.crashLoopLimit { changes.append("signer-crash-limit → \(new.crashLoopLimit) (now)") }
            if old.stdin != new.stdin { changes.append("signer-stdin → \(new.stdin) (the signer's next start)") }
            if old.type != new.type { changes.append("signer-type → \(new.type.rawValue) (the signer's next start)") }
            if old.stopSignal != new.stopSignal { changes.append("signer-stop-signal → \(new.stopSignal.rawValue) (now)") }
            if old.restartMaximumDelay != new.restartMaximumDelay {
                changes.append("signer-restart-max-delay → \(new.restartMaximumDelay) (now)")
            }
            if old.startGrace != new.startGrace { changes.append("signer-start-grace → \(new.startGrace) (now)") }
            if old.healthCheck != new.healthCheck {
                changes.append(new.healthCheck == nil ? "signer-health-command removed (now)" : "signer-health-* (the next probe)")
            }
        }
        return changes
    }
}
