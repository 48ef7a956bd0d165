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
    public var signerCrashLimit: Int?
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
    public static func resolve(_ commandLine: CommandLineOptions, environment: [String: String],
                               executablePath: String) throws(ConfigurationError) -> DaemonSettings {
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
            soundscapes: .standard(extra: file.soundscapeDirectories + commandLine.soundscapeDirectories,
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
            return (try ConfigFile(parsing: text), path)
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
    }

    /// The signer host from the config file, with command-line flags taking precedence.
    private static func signer(_ commandLine: CommandLineOptions, file: ConfigFile) throws(ConfigurationError)
        -> SignerConfiguration?
    {
        var command = file.signerCommand
        if let signerCommand = commandLine.signerCommand {
            do {
                command = try ShellWords.split(signerCommand)
            } catch {
                throw ConfigurationError("--signer-command: \(error)")
            }
            guard command?.isEmpty == false else { throw ConfigurationError("--signer-command is empty") }
        }
        guard let command else { return nil }
        var configuration = SignerConfiguration(command: command)
        configuration.workingDirectory = commandLine.signerDirectory ?? file.signerDirectory
        configuration.environment = file.signerEnvironment
        for assignment in commandLine.signerEnvironment {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ConfigurationError("--signer-env expects NAME=VALUE, got '\(assignment)'")
            }
            configuration.environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        configuration.keepRunningWhenStopped = commandLine.signerKeepRunning || (file.signerKeepRunning ?? false)
        do {
            if let timeout = commandLine.signerStopTimeout {
                configuration.stopTimeout = try ConfigFile.seconds(timeout, key: "--signer-stop-timeout", line: 0)
            } else if let timeout = file.signerStopTimeout {
                configuration.stopTimeout = timeout
            }
            if let delay = commandLine.signerRestartDelay {
                configuration.restartDelay = try ConfigFile.seconds(delay, key: "--signer-restart-delay", line: 0)
            } else if let delay = file.signerRestartDelay {
                configuration.restartDelay = delay
            }
            if let limit = commandLine.signerCrashLimit ?? file.signerCrashLimit {
                guard (1...1000).contains(limit) else { throw ConfigurationError("--signer-crash-limit must be from 1 to 1000") }
                configuration.crashLoopLimit = limit
            }
            if let timeout = commandLine.signerLivenessTimeout {
                configuration.livenessTimeout = try ConfigFile.seconds(timeout, key: "--signer-liveness-timeout", line: 0)
            } else {
                configuration.livenessTimeout = file.signerLivenessTimeout
            }
        } catch let error as ConfigFile.ParseError {
            throw ConfigurationError(error.message)
        } catch {
            throw ConfigurationError("\(error)")
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
            changes.append("soundscapes-dir → \(new.soundscapes.extra.isEmpty ? "none" : new.soundscapes.extra.joined(separator: ", ")) (the next list or play)")
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
        }
        return changes
    }
}
