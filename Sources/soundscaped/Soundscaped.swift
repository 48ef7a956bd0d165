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
    nonisolated(unsafe) static var signals = DaemonSignals()

    static let configuration = CommandConfiguration(
        commandName: "soundscaped",
        abstract: "Keep-alive soundscape service: plays looping ambient soundscapes through PipeWire.",
        discussion: """
            Runs in the foreground; control it with soundscapectl. The saved volume, soundscape \
            and playing state are restored on start: if it was playing when it stopped, it plays again. \
            SIGHUP reads the config file again (see soundscaped.conf(5) and docs/configuration.md); \
            SIGTERM and SIGINT fade out and stop; SIGUSR1, SIGUSR2 and SIGPIPE are ignored.
            """,
        version: SoundscapedVersion.string)

    @Option(
        help: ArgumentHelp(
            "Control socket path.",
            discussion: "Default: $SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock.",
            valueName: "path"))
    var socket: String?

    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "Directory of the state database.",
            discussion: "Default: $XDG_STATE_HOME/soundscaped, else ~/.local/state/soundscaped.",
            valueName: "dir"))
    var stateDirectory: String?

    @Option(
        name: .customLong("soundscapes-dir"),
        help: ArgumentHelp(
            "Also offer the soundscapes in this directory (*.opus, optional manifest.json). Repeatable.",
            valueName: "dir"))
    var soundscapeDirectories: [String] = []

    @Option(
        name: .customLong("cache-dir"),
        help: ArgumentHelp(
            "Directory for decoded loops, which make long playback far cheaper than decoding each pass; 'none' disables it.",
            discussion:
                "Default: $XDG_CACHE_HOME/soundscaped/pcm, else ~/.cache/soundscaped/pcm. Each cached loop takes about 23 MB per minute of audio; see --cache-size.",
            valueName: "dir"))
    var cacheDirectory: String?

    @Option(
        name: .customLong("cache-size"),
        help: ArgumentHelp(
            "Most disk space the decoded loops may take together, in MiB (default 512).",
            discussion: "The least recently played loops make room for a new one; a loop that would not fit plays by decoding.",
            valueName: "MiB"))
    var cacheSize: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default info).")
    var logLevel: String?

    @Option(
        name: .customLong("latency-frames"),
        help: ArgumentHelp(
            "Requested PipeWire quantum in frames at 48 kHz (node.latency); larger means fewer wake-ups.",
            valueName: "frames"))
    var latencyFrames: Int = 2048

    @Option(
        help: ArgumentHelp(
            "Config file (see soundscaped.conf(5), docs/configuration.md).",
            discussion:
                "Default: $XDG_CONFIG_HOME/soundscaped/soundscaped.conf, else ~/.config/soundscaped/soundscaped.conf; a missing default file is fine.",
            valueName: "file"))
    var config: String?

    @Option(
        name: .customLong("signer-command"),
        help: ArgumentHelp(
            "Signer host to keep alive while playing: \"PROGRAM ARG …\", split like a shell would (no shell runs).",
            valueName: "command"))
    var signerCommand: String?

    @Option(name: .customLong("signer-directory"), help: ArgumentHelp("Working directory of the signer host.", valueName: "dir"))
    var signerDirectory: String?

    @Option(name: .customLong("signer-env"), help: ArgumentHelp("Extra environment for the signer host. Repeatable.", valueName: "NAME=VALUE"))
    var signerEnvironment: [String] = []

    @Flag(name: .customLong("signer-keep-running"), help: "Keep the signer host running while audio is stopped.")
    var signerKeepRunning = false

    @Option(
        name: .customLong("signer-stdin"),
        help: ArgumentHelp(
            "The signer host's stdin: events (every event as a JSON line), null (/dev/null, the default) or file:PATH (a passphrase file: its bytes, then end of file).",
            discussion: "A file must be a regular file owned by you with no group or other access (chmod 600).",
            valueName: "events|null|file:PATH"))
    var signerStdin: String?

    @Option(
        name: .customLong("signer-stop-signal"),
        help: ArgumentHelp(
            "Signal that asks the signer host to stop: SIGTERM (default), SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2.",
            valueName: "signal"))
    var signerStopSignal: String?

    @Option(
        name: .customLong("signer-stop-timeout"),
        help: ArgumentHelp(
            "Seconds between the stop signal and SIGKILL when stopping the signer host (default 5).", valueName: "seconds"))
    var signerStopTimeout: String?

    @Option(
        name: .customLong("signer-type"),
        help: ArgumentHelp(
            "simple (default): the signer host is ready once started; notify: once it sends READY=1 to $NOTIFY_SOCKET.",
            valueName: "simple|notify"))
    var signerType: String?

    @Option(
        name: .customLong("signer-liveness-timeout"),
        help: ArgumentHelp(
            "If set, the signer host must print a 'heartbeat' line (or send WATCHDOG=1) at least this often or it is restarted.",
            valueName: "seconds"))
    var signerLivenessTimeout: String?

    @Option(
        name: .customLong("signer-restart-delay"),
        help: ArgumentHelp(
            "First restart delay in seconds (default 1); it doubles per quick failure, up to --signer-restart-max-delay.",
            valueName: "seconds"))
    var signerRestartDelay: String?

    @Option(
        name: .customLong("signer-restart-max-delay"),
        help: ArgumentHelp(
            "Longest restart delay in seconds (default 60).", valueName: "seconds"))
    var signerRestartMaxDelay: String?

    @Option(
        name: .customLong("signer-crash-limit"),
        help: ArgumentHelp(
            "Quick failures in a row before the signer host is marked failed until the next play (default 5; 0 never gives up).",
            valueName: "count"))
    var signerCrashLimit: String?

    @Option(
        name: .customLong("signer-health-command"),
        help: ArgumentHelp(
            "Command that checks the signer signs: exit 0 is healthy, its first stdout line the signer's status. Split like --signer-command.",
            valueName: "command"))
    var signerHealthCommand: String?

    @Option(
        name: .customLong("signer-health-interval"),
        help: ArgumentHelp(
            "Seconds from one health check's end to the next (default 10).", valueName: "seconds"))
    var signerHealthInterval: String?

    @Option(
        name: .customLong("signer-health-timeout"),
        help: ArgumentHelp(
            "Seconds before a health check is killed with its process group, and has failed (default 5).", valueName: "seconds"))
    var signerHealthTimeout: String?

    @Option(
        name: .customLong("signer-health-retries"),
        help: ArgumentHelp(
            "Failed health checks in a row that make the signer host unhealthy (default 3).", valueName: "count"))
    var signerHealthRetries: String?

    @Option(
        name: .customLong("signer-restart-on-unhealthy"),
        help: ArgumentHelp(
            "Restart an unhealthy signer host, with backoff (default true).", valueName: "true|false"))
    var signerRestartOnUnhealthy: String?

    @Option(
        name: .customLong("signer-start-grace"),
        help: ArgumentHelp(
            "Seconds the signer host may be not running and ready before signing counts as down (default 10).",
            valueName: "seconds"))
    var signerStartGrace: String?

    @Option(
        name: .customLong("interruption-roles"),
        help: ArgumentHelp(
            "media.role values whose streams interrupt us (comma-separated; default Communication,Phone).", valueName: "roles"))
    var interruptionRoles: String?

    @Option(
        name: .customLong("voip-apps"),
        help: ArgumentHelp(
            "Applications whose streams interrupt us, by application.process.binary or application.name (comma-separated).",
            valueName: "names"))
    var voipApplications: String?

    // For measuring what StartupPages saves (docs/performance.md); not for everyday use.
    @Flag(name: .customLong("keep-startup-pages"), help: .hidden)
    var keepStartupPages = false

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        guard (64...8192).contains(latencyFrames) else {
            throw ValidationError("--latency-frames must be between 64 and 8192")
        }
        if let cacheSize, !(0...1_048_576).contains(cacheSize) {
            throw ValidationError("--cache-size must be between 0 and 1048576 MiB")
        }
    }

    /// The flags as given, for the daemon to resolve now and again on every reload.
    var commandLine: CommandLineOptions {
        var options = CommandLineOptions()
        options.socket = socket
        options.stateDirectory = stateDirectory
        options.soundscapeDirectories = soundscapeDirectories
        options.cacheDirectory = cacheDirectory
        options.cacheSize = cacheSize
        options.logLevel = logLevel
        options.latencyFrames = latencyFrames
        options.config = config
        options.signerCommand = signerCommand
        options.signerDirectory = signerDirectory
        options.signerEnvironment = signerEnvironment
        options.signerKeepRunning = signerKeepRunning
        options.signerStopTimeout = signerStopTimeout
        options.signerLivenessTimeout = signerLivenessTimeout
        options.signerRestartDelay = signerRestartDelay
        options.signerCrashLimit = signerCrashLimit
        options.signerStdin = signerStdin
        options.signerStopSignal = signerStopSignal
        options.signerType = signerType
        options.signerRestartMaxDelay = signerRestartMaxDelay
        options.signerHealthCommand = signerHealthCommand
        options.signerHealthInterval = signerHealthInterval
        options.signerHealthTimeout = signerHealthTimeout
        options.signerHealthRetries = signerHealthRetries
        options.signerRestartOnUnhealthy = signerRestartOnUnhealthy
        options.signerStartGrace = signerStartGrace
        options.interruptionRoles = interruptionRoles
        options.voipApplications = voipApplications
        options.keepStartupPages = keepStartupPages
        return options
    }

    func run() async throws {
        let environment = FileSystem.environment()
        let executable = FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments[0]
        let commandLine = self.commandLine
        let settings = try DaemonSettings.resolve(commandLine, environment: environment, executablePath: executable)
        try await Daemon.run(
            settings: settings, commandLine: commandLine, environment: environment,
            executablePath: executable, signals: Self.signals)
    }
}
