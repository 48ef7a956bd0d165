import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem

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
/// the defaults, every setting as `Settings` declares it (docs/configuration.md).
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
    /// Every setting's value, as resolved.
    public var values: SettingValues

    /// What parsing a setting may ask of this system: `$HOME` for a leading `~`, the
    /// check a secret file (a passphrase, an env file, a credential) must pass, and
    /// whether the daemon was given a credential to pass on.
    public static func context(environment: [String: String]) -> SettingContext {
        let credentials = environment["CREDENTIALS_DIRECTORY"]
        return SettingContext(
            home: environment["HOME"], checkSecretFile: StdinFile.problem,
            checkInheritedCredential: { SignerSecrets.inheritedProblem($0, daemonCredentials: credentials) },
            checkJSON: JSONBody.problem)
    }

    /// Resolves the command line's setting flags, as given (`--signer-stop-signal KILL`):
    /// parsed against this system, then over the config file they name. A flag the
    /// parser refuses (an unknown one, a value out of range) is a configuration error,
    /// as a refused line of the file is, naming the flag; the same arguments give the
    /// same answer every time, so only a change of the file (or a start with other
    /// flags) can mend it.
    public static func resolve(
        arguments: [String], environment: [String: String], executablePath: String
    ) throws(ConfigurationError) -> (flags: SettingValues, settings: DaemonSettings) {
        let flags: SettingValues
        do {
            flags = try CommandLineSettings.parse(arguments, context: context(environment: environment))
        } catch {
            throw ConfigurationError(error.isUsage ? "the command line: \(error)" : error.description)
        }
        return (flags, try resolve(flags: flags, environment: environment, executablePath: executablePath))
    }

    /// Resolves the setting flags `flags` against the environment and the config file
    /// they name (or the default one, which may be absent).
    public static func resolve(
        flags: SettingValues, environment: [String: String], executablePath: String
    ) throws(ConfigurationError) -> DaemonSettings {
        guard let socketPath = DaemonPaths.socket(explicit: flags[Settings.socket], environment: environment) else {
            throw ConfigurationError("XDG_RUNTIME_DIR is not set: pass --socket PATH or set SOUNDSCAPED_SOCKET")
        }
        guard let stateDirectory = DaemonPaths.stateDirectory(explicit: flags[Settings.stateDirectory], environment: environment)
        else {
            throw ConfigurationError("neither XDG_STATE_HOME nor HOME is set: pass --state-dir DIR")
        }
        let (file, configPath) = try configFile(flags[Settings.config], environment: environment)
        let values = SettingValues.merged(flags: flags, file: file.values)
        let signer = SignerConfiguration(values)
        if signer != nil, let (setting, problem) = SignerConfiguration.healthProblem(values) {
            throw ConfigurationError("\(place(of: setting, in: values, configPath: configPath)): \(problem)")
        }
        try checkPrograms(signer, values: values, configPath: configPath, environment: environment)

        var output = OutputConfiguration()
        output.latencyFrames = values[Settings.latencyFrames]
        switch values[Settings.cacheDirectory] {
        case SettingParsers.none?: output.pcmCacheDirectory = nil
        case let explicit?: output.pcmCacheDirectory = explicit
        case nil: output.pcmCacheDirectory = DaemonPaths.cacheDirectory(environment: environment).map { $0 + "/pcm" }
        }
        output.pcmCacheBudgetBytes = Int64(values[Settings.cacheSize]) << 20
        output.callDetection = CallDetection(
            roles: values[Settings.interruptionRoles], applications: values[Settings.voipApplications])
        return DaemonSettings(
            socketPath: socketPath, stateDirectory: stateDirectory,
            soundscapes: .standard(
                extra: values[Settings.soundscapeDirectories], environment: environment, executablePath: executablePath),
            logLevel: Logger.Level(values[Settings.logLevel]), output: output, signer: signer,
            configPath: configPath, releaseStartupPages: !values[Settings.keepStartupPages], values: values)
    }

    /// Where the config file is: `--config`, else `$XDG_CONFIG_HOME/soundscaped/soundscaped.conf`,
    /// else `~/.config/soundscaped/soundscaped.conf` (nil with neither variable set).
    public static func configPath(flags: SettingValues, environment: [String: String]) -> String? {
        if let explicit = flags[Settings.config] { return explicit }
        if let home = environment["XDG_CONFIG_HOME"], FilePaths.isAbsolute(home) { return home + "/soundscaped/soundscaped.conf" }
        if let home = environment["HOME"], FilePaths.isAbsolute(home) { return home + "/.config/soundscaped/soundscaped.conf" }
        return nil
    }

    /// The config file (empty when the default one does not exist). A bad one is an error naming its line.
    private static func configFile(_ explicit: String?, environment: [String: String]) throws(ConfigurationError)
        -> (ConfigFile, String?)
    {
        var flags = SettingValues()
        if let explicit { flags.set(Settings.config, explicit) }
        guard let path = configPath(flags: flags, environment: environment) else { return (ConfigFile(), nil) }
        guard let text = FileSystem.text(of: path) else {
            if explicit != nil || FileSystem.exists(path) {
                throw ConfigurationError("cannot read the config file \(path)")
            }
            return (ConfigFile(), nil)
        }
        do {
            return (try ConfigFile(parsing: text, context: context(environment: environment)), path)
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
    }

    /// A signer or health command whose program cannot be run is refused now, naming
    /// its line or flag, rather than found out at the first start.
    private static func checkPrograms(
        _ signer: SignerConfiguration?, values: SettingValues, configPath: String?, environment: [String: String]
    ) throws(ConfigurationError) {
        guard let signer else { return }
        for (setting, command) in [(Settings.signerCommand, signer.command), (Settings.signerHealthCommand, signer.healthCommand)] {
            guard let program = command?.first,
                let problem = ProgramLookup.problem(program, workingDirectory: signer.workingDirectory, path: environment["PATH"])
            else { continue }
            throw ConfigurationError("\(place(of: setting, in: values, configPath: configPath)): \(problem)")
        }
    }

    /// Where `setting` was set, as an error names it: its flag, or the file, line and key.
    private static func place(of setting: some AnySetting, in values: SettingValues, configPath: String?) -> String {
        switch values.origin(of: setting) {
        case let flag? where flag.hasPrefix("--"): flag
        case let line?: "\(configPath ?? "the config file"): \(line): \(setting.key)"
        case nil: setting.key
        }
    }

    /// What a reload to `new` changes, in words for the log ("what changed"),
    /// each saying when it takes effect.
    public func changes(to new: DaemonSettings) -> [String] {
        var changes = values.changes(to: new.values)
        guard let command = changes.firstIndex(where: { $0.hasPrefix(Settings.signerCommand.key + " ") }) else { return changes }
        switch (signer, new.signer) {
        case (nil, _?): changes[command] = "a signer host is configured (it starts with the next session, or now if one runs)"
        case (_?, nil): changes[command] = "the signer host is no longer configured (it stops now)"
        default: break
        }
        return changes
    }
}

extension Logger.Level {
    init(_ level: LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
