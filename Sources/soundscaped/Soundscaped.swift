import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeDaemon
import SoundscapeLibrary
import SoundscapeSystem

struct Soundscaped: AsyncParsableCommand {
    /// Set by main.swift before the command runs.
    nonisolated(unsafe) static var signals = ShutdownSignals.serviceLifecycle

    static let configuration = CommandConfiguration(
        commandName: "soundscaped",
        abstract: "Keep-alive soundscape service: plays looping ambient soundscapes through PipeWire.",
        discussion: """
            Runs in the foreground; control it with soundscapectl. The saved volume, soundscape \
            and playing state are restored on start: if it was playing when it stopped, it plays again.
            """,
        version: Daemon.version)

    @Option(help: ArgumentHelp(
        "Control socket path.",
        discussion: "Default: $SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock.",
        valueName: "path"))
    var socket: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Directory of the state database.",
        discussion: "Default: $XDG_STATE_HOME/soundscaped, else ~/.local/state/soundscaped.",
        valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("soundscapes-dir"), help: ArgumentHelp(
        "Also offer the soundscapes in this directory (*.opus, optional manifest.json). Repeatable.",
        valueName: "dir"))
    var soundscapeDirectories: [String] = []

    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "Directory for decoded loops, which make long playback far cheaper than decoding each pass; 'none' disables it.",
        discussion: "Default: $XDG_CACHE_HOME/soundscaped/pcm, else ~/.cache/soundscaped/pcm. Each cached loop takes about 23 MB per minute of audio; see --cache-size.",
        valueName: "dir"))
    var cacheDirectory: String?

    @Option(name: .customLong("cache-size"), help: ArgumentHelp(
        "Most disk space the decoded loops may take together, in MiB (default 512).",
        discussion: "The least recently played loops make room for a new one; a loop that would not fit plays by decoding.",
        valueName: "MiB"))
    var cacheSize: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("latency-frames"), help: ArgumentHelp(
        "Requested PipeWire quantum in frames at 48 kHz (node.latency); larger means fewer wake-ups.",
        valueName: "frames"))
    var latencyFrames: Int = 2048

    @Option(help: ArgumentHelp(
        "Config file (see docs/configuration.md).",
        discussion: "Default: $XDG_CONFIG_HOME/soundscaped/soundscaped.conf, else ~/.config/soundscaped/soundscaped.conf; a missing default file is fine.",
        valueName: "file"))
    var config: String?

    @Option(name: .customLong("signer-command"), help: ArgumentHelp(
        "Signer host to keep alive while playing: \"PROGRAM ARG …\", split like a shell would (no shell runs).",
        valueName: "command"))
    var signerCommand: String?

    @Option(name: .customLong("signer-directory"), help: ArgumentHelp("Working directory of the signer host.", valueName: "dir"))
    var signerDirectory: String?

    @Option(name: .customLong("signer-env"), help: ArgumentHelp("Extra environment for the signer host. Repeatable.", valueName: "NAME=VALUE"))
    var signerEnvironment: [String] = []

    @Flag(name: .customLong("signer-keep-running"), help: "Keep the signer host running while audio is stopped.")
    var signerKeepRunning = false

    @Option(name: .customLong("signer-stop-timeout"), help: ArgumentHelp(
        "Seconds between SIGTERM and SIGKILL when stopping the signer host (default 5).", valueName: "seconds"))
    var signerStopTimeout: String?

    @Option(name: .customLong("signer-liveness-timeout"), help: ArgumentHelp(
        "If set, the signer host must print a 'heartbeat' line at least this often or it is restarted.",
        valueName: "seconds"))
    var signerLivenessTimeout: String?

    @Option(name: .customLong("signer-restart-delay"), help: ArgumentHelp(
        "First restart delay in seconds (default 1); it doubles per quick failure, up to 60.", valueName: "seconds"))
    var signerRestartDelay: String?

    @Option(name: .customLong("signer-crash-limit"), help: ArgumentHelp(
        "Quick failures in a row before the signer host is marked failed until the next play (default 5).",
        valueName: "count"))
    var signerCrashLimit: Int?

    @Option(name: .customLong("interruption-roles"), help: ArgumentHelp(
        "media.role values whose streams interrupt us (comma-separated; default Communication,Phone).", valueName: "roles"))
    var interruptionRoles: String?

    @Option(name: .customLong("voip-apps"), help: ArgumentHelp(
        "Applications whose streams interrupt us, by application.process.binary or application.name (comma-separated).",
        valueName: "names"))
    var voipApplications: String?

    // For measuring what StartupPages saves (docs/performance.md); not for everyday use.
    @Flag(name: .customLong("keep-startup-pages"), help: .hidden)
    var keepStartupPages = false

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        guard (64...8192).contains(latencyFrames) else {
            throw ValidationError("--latency-frames must be between 64 and 8192")
        }
        if let cacheSize, !(0...1_048_576).contains(cacheSize) {
            throw ValidationError("--cache-size must be between 0 and 1048576 MiB")
        }
    }

    func run() async throws {
        let environment = FileSystem.environment()
        guard let socketPath = DaemonPaths.socket(explicit: socket, environment: environment) else {
            throw ValidationError("XDG_RUNTIME_DIR is not set: pass --socket PATH or set SOUNDSCAPED_SOCKET")
        }
        guard let stateDirectory = DaemonPaths.stateDirectory(explicit: stateDirectory, environment: environment) else {
            throw ValidationError("neither XDG_STATE_HOME nor HOME is set: pass --state-dir DIR")
        }
        var output = OutputConfiguration()
        output.latencyFrames = latencyFrames
        switch cacheDirectory {
        case "none": output.pcmCacheDirectory = nil
        case let explicit? where !explicit.isEmpty: output.pcmCacheDirectory = explicit
        default: output.pcmCacheDirectory = DaemonPaths.cacheDirectory(environment: environment).map { $0 + "/pcm" }
        }
        if let cacheSize { output.pcmCacheBudgetBytes = Int64(cacheSize) << 20 }
        let file = try configFile(environment: environment)
        let signer = try signerConfiguration(file: file)
        if let roles = interruptionRoles.map(ConfigFile.list) ?? file.interruptionRoles {
            output.callDetection.roles = roles
        }
        if let apps = voipApplications.map(ConfigFile.list) ?? file.voipApplications {
            output.callDetection.applications = apps
        }
        let executable = FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments[0]
        let options = DaemonOptions(
            socketPath: socketPath,
            stateDirectory: stateDirectory,
            soundscapes: .standard(extra: soundscapeDirectories, environment: environment, executablePath: executable),
            logLevel: Logger.Level(rawValue: logLevel) ?? .info,
            output: output,
            signer: signer,
            releaseStartupPages: !keepStartupPages)
        try await Daemon.run(options: options, environment: environment, signals: Self.signals)
    }

    /// The config file (empty when the default one does not exist). A bad file refuses to start.
    private func configFile(environment: [String: String]) throws -> ConfigFile {
        var file = ConfigFile()
        let path: String?
        if let config {
            path = config
        } else if let home = environment["XDG_CONFIG_HOME"], home.hasPrefix("/") {
            path = home + "/soundscaped/soundscaped.conf"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            path = home + "/.config/soundscaped/soundscaped.conf"
        } else {
            path = nil
        }
        if let path {
            if let text = FileSystem.text(of: path) {
                do {
                    file = try ConfigFile(parsing: text)
                } catch {
                    throw ConfigurationError("\(path): \(error)")
                }
            } else if config != nil {
                throw ConfigurationError("cannot read the config file \(path)")
            }
        }
        return file
    }

    /// The signer host from the config file, with command-line flags taking precedence.
    private func signerConfiguration(file: ConfigFile) throws -> SignerConfiguration? {
        var command = file.signerCommand
        if let signerCommand {
            do {
                command = try ShellWords.split(signerCommand)
            } catch {
                throw ConfigurationError("--signer-command: \(error)")
            }
            guard command?.isEmpty == false else { throw ConfigurationError("--signer-command is empty") }
        }
        guard let command else { return nil }
        var configuration = SignerConfiguration(command: command)
        configuration.workingDirectory = signerDirectory ?? file.signerDirectory
        configuration.environment = file.signerEnvironment
        for assignment in signerEnvironment {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ConfigurationError("--signer-env expects NAME=VALUE, got '\(assignment)'")
            }
            configuration.environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        configuration.keepRunningWhenStopped = signerKeepRunning || (file.signerKeepRunning ?? false)
        do {
            if let signerStopTimeout {
                configuration.stopTimeout = try ConfigFile.seconds(signerStopTimeout, key: "--signer-stop-timeout", line: 0)
            } else if let timeout = file.signerStopTimeout {
                configuration.stopTimeout = timeout
            }
            if let signerRestartDelay {
                configuration.restartDelay = try ConfigFile.seconds(signerRestartDelay, key: "--signer-restart-delay", line: 0)
            } else if let delay = file.signerRestartDelay {
                configuration.restartDelay = delay
            }
            if let limit = signerCrashLimit ?? file.signerCrashLimit {
                guard (1...1000).contains(limit) else { throw ConfigurationError("--signer-crash-limit must be from 1 to 1000") }
                configuration.crashLoopLimit = limit
            }
            if let signerLivenessTimeout {
                configuration.livenessTimeout = try ConfigFile.seconds(signerLivenessTimeout, key: "--signer-liveness-timeout", line: 0)
            } else {
                configuration.livenessTimeout = file.signerLivenessTimeout
            }
        } catch let error as ConfigFile.ParseError {
            throw ConfigurationError(error.message)
        }
        return configuration
    }
}

/// A bad config file or signer option: the daemon refuses to start (exit status 1), naming the problem.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
