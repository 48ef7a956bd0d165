/// Every setting of the daemon, each declared once: the one file under `Sources/`
/// that names a key. The config file, the flags, their merge, a reload's list of
/// changes, `soundscaped --help` and `--print-settings` are made from this table,
/// and `SettingsDocumentationTests` hold docs/configuration.md and
/// soundscaped.conf(5) to it. Adding a setting is an entry here (and in `all`) plus
/// the code that uses its value.
public enum Settings {
    public typealias P = SettingParsers

    // MARK: The signer host

    public static let signerCommand = Setting<[String]?>(
        "signer-command", valueName: "\"PROGRAM ARG …\"", default: nil, effect: .signerNextStart,
        help: "The signer host to keep alive while playing, split like a shell would (no shell runs); its program must exist.",
        parse: P.command, format: P.optional(P.formatCommand))
    public static let signerDirectory = Setting<String?>(
        "signer-directory", valueName: "DIR", default: nil, effect: .signerNextStart,
        help: "The signer host's working directory (absolute; default: the daemon's).",
        parse: P.optionalPath, format: P.optional { $0 })
    public static let signerEnvironment = Setting<[String: String]>(
        "signer-env", valueName: "NAME=VALUE", default: [:], effect: .signerNextStart,
        help: "A variable added to the signer host's environment.",
        parse: P.assignment, accumulate: { $0.merging($1) { $1 } },
        // Names only: a value may be a secret.
        format: { $0.isEmpty ? P.none : $0.keys.sorted().joined(separator: ", ") })
    public static let signerEnvironmentFiles = Setting<[String]>(
        "signer-env-file", valueName: "PATH", default: [], effect: .signerNextStart,
        help:
            "A file of NAME=VALUE lines (systemd's EnvironmentFile= syntax) added to the signer host's environment, read at each of its starts (a file of yours, chmod 600).",
        parse: P.secretFile, accumulate: { $0 + $1 }, format: { $0.isEmpty ? P.none : $0.joined(separator: ", ") })
    public static let signerCredentials = Setting<[SignerCredential]>(
        "signer-credential", valueName: "NAME[:PATH]", default: [], effect: .signerNextStart,
        help:
            "A credential the signer host reads from $CREDENTIALS_DIRECTORY/NAME, as systemd's LoadCredential= gives one: PATH's bytes (a file of yours, chmod 600), or without :PATH the one soundscaped.service was given.",
        parse: P.credential, accumulate: SignerCredential.merged,
        // Names and paths, never what the files hold.
        format: { $0.isEmpty ? P.none : $0.map(\.description).joined(separator: ", ") })
    public static let signerKeepRunning = Setting<Bool>(
        "signer-keep-running", valueName: "true|false", default: false, effect: .now, isSwitch: true,
        help: "Keep the signer host running while audio is stopped, once a session began.",
        parse: P.bool, format: { "\($0)" })
    public static let signerStdin = Setting<SignerStdin>(
        "signer-stdin", valueName: "events|null|file:PATH", default: .null, effect: .signerNextStart,
        help:
            "The signer host's stdin: events (every event as a JSON line), null (/dev/null) or file:PATH (a passphrase file of yours, chmod 600: its bytes, then end of file).",
        parse: P.stdin, format: { "\($0)" })
    public static let signerStopSignal = Setting<SignerStopSignal>(
        "signer-stop-signal", valueName: "SIGNAL", default: .term, effect: .now,
        help: "The signal that asks the signer host to stop (then SIGCONT): SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2.",
        parse: P.stopSignal, format: { $0.rawValue })
    public static let signerStopTimeout = Setting<Duration>(
        "signer-stop-timeout", valueName: "seconds", default: .seconds(5), effect: .now,
        help: "Seconds from the stop signal to SIGKILL of the signer host's process group.",
        parse: P.seconds, format: P.formatSeconds)
    public static let signerType = Setting<SignerType>(
        "signer-type", valueName: "simple|notify", default: .simple, effect: .signerNextStart,
        help: "simple: the signer host is ready once started; notify: once it sends READY=1 to $NOTIFY_SOCKET.",
        parse: P.choice(SignerType.self), format: { $0.rawValue })
    public static let signerLivenessTimeout = Setting<Duration?>(
        "signer-liveness-timeout", valueName: "seconds", default: nil, effect: .now,
        help: "If set, the signer host must print a 'heartbeat' line (or send WATCHDOG=1) at least this often, or it is restarted.",
        parse: P.optionalSeconds, format: P.optional(P.formatSeconds))
    public static let signerRestartDelay = Setting<Duration>(
        "signer-restart-delay", valueName: "seconds", default: .seconds(1), effect: .now,
        help: "The delay before a restart after a quick failure; each further quick failure in a row doubles it.",
        parse: P.seconds, format: P.formatSeconds)
    public static let signerRestartMaxDelay = Setting<Duration>(
        "signer-restart-max-delay", valueName: "seconds", default: .seconds(60), effect: .now,
        help: "The longest restart delay.",
        parse: P.seconds, format: P.formatSeconds)
    public static let signerCrashLimit = Setting<Int>(
        "signer-crash-limit", valueName: "count", default: 0, effect: .now,
        help:
            "Quick failures in a row before the signer host is marked failed until the next play; 0 never gives up (restarts wait at most signer-restart-max-delay).",
        parse: P.count(in: 0...1000), format: { "\($0)" })
    public static let signerHealthCommand = Setting<[String]?>(
        "signer-health-command", valueName: "\"PROGRAM ARG …\"", default: nil, effect: .now,
        help: "A command whose exit status 0 says the signer signs; its first stdout line is the signer's status. Split like signer-command.",
        parse: P.command, format: P.optional(P.formatCommand))
    public static let signerHealthExitCodes = Setting<SignerHealthExitCodes>(
        "signer-health-exit-codes", valueName: "plain|monitoring-plugins", default: .plain, effect: .now,
        help:
            "What the health command's exit status means: plain (0 healthy, else failed) or monitoring-plugins (0 OK, 1 WARNING: degraded, it still signs; 2 CRITICAL and 3 UNKNOWN: failed).",
        parse: P.choice(SignerHealthExitCodes.self), format: { $0.rawValue })
    public static let signerHealthURL = Setting<SignerHealthURL?>(
        "signer-health-url", valueName: "URL", default: nil, effect: .now,
        help:
            "The built-in health check instead of a command: http://ADDRESS[:PORT]/PATH (an IP address or localhost), healthy on a 2xx answer (and signer-health-json).",
        parse: P.healthURL, format: P.optional { $0.description })
    public static let signerHealthJSON = Setting<JSONCondition?>(
        "signer-health-json", valueName: "\"POINTER ==|!= VALUE\"", default: nil, effect: .now,
        help: "With signer-health-url: a condition on its JSON body, a JSON pointer, == or !=, and a JSON value (/health/isConnected == true).",
        parse: P.jsonCondition, format: P.optional { $0.description })
    public static let signerHealthInterval = Setting<Duration>(
        "signer-health-interval", valueName: "seconds", default: .seconds(10), effect: .now,
        help: "Seconds from the start of one health check to the start of the next (a check still running delays the next).",
        parse: P.seconds, format: P.formatSeconds)
    public static let signerHealthTimeout = Setting<Duration>(
        "signer-health-timeout", valueName: "seconds", default: .seconds(5), effect: .now,
        help: "Seconds before a health check is killed with its process group, and has failed.",
        parse: P.seconds, format: P.formatSeconds)
    public static let signerHealthRetries = Setting<Int>(
        "signer-health-retries", valueName: "count", default: 3, effect: .now,
        help: "Failed health checks in a row that make the signer host unhealthy.",
        parse: P.count(in: 1...100), format: { "\($0)" })
    public static let signerRestartOnUnhealthy = Setting<Bool>(
        "signer-restart-on-unhealthy", valueName: "true|false", default: true, effect: .now,
        help: "Restart an unhealthy signer host, with backoff.",
        parse: P.bool, format: { "\($0)" })
    public static let signerStartGrace = Setting<Duration>(
        "signer-start-grace", valueName: "seconds", default: .seconds(10), effect: .now,
        help: "Seconds the signer host may be not running and ready before signing counts as down.",
        parse: P.seconds, format: P.formatSeconds)

    public static let signerMemoryDenyWriteExecute = Setting<Bool>(
        "signer-memory-deny-write-execute", valueName: "true|false", default: false, effect: .signerNextStart,
        help:
            "Refuse the signer host writable-and-executable memory (W^X), as systemd's MemoryDenyWriteExecute=: for a Rust, Go or C signer. A JIT runtime (Node.js, Bun, Deno, a JVM) needs it off.",
        parse: P.bool, format: { "\($0)" })
    public static let signerAddressFamilies = Setting<Set<AddressFamily>?>(
        "signer-address-families", valueName: "AF_… …|none", default: nil, effect: .signerNextStart,
        help:
            "The only socket address families the signer host may use (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_BLUETOOTH, AF_VSOCK; none for none), as systemd's RestrictAddressFamilies=; default: what soundscaped.service allows.",
        parse: P.addressFamilies, format: P.optional { $0.isEmpty ? "none" : $0.map(\.rawValue).sorted().joined(separator: " ") })

    // MARK: Calls, soundscapes, the cache, the log

    public static let interruptionRoles = Setting<Set<String>>(
        "interruption-roles", valueName: "ROLE, …", default: ["Communication", "Phone"], effect: .now,
        help: "media.role values of streams that count as calls, and the device.intended-roles that make a sink a call route.",
        parse: P.list, format: P.formatList)
    public static let voipApplications = Setting<Set<String>>(
        "voip-apps", valueName: "NAME, …",
        default: [
            "baresip", "discord", "element", "jami", "linphone", "mumble", "signal-desktop", "skype",
            "slack", "teams", "telegram-desktop", "zoom", "zoiper", "microsip", "jitsi",
        ], effect: .now,
        help: "Applications whose streams count as calls (application.process.binary or application.name).",
        parse: P.list, format: P.formatList)
    public static let soundscapeDirectories = Setting<[String]>(
        "soundscapes-dir", valueName: "DIR", default: [], effect: .now,
        help: "Another directory of *.opus soundscapes (absolute), after the built-in ones.",
        parse: P.paths, accumulate: { $0 + $1 }, format: { $0.isEmpty ? P.none : $0.joined(separator: ", ") })
    public static let cacheSize = Setting<Int>(
        "cache-size", valueName: "MiB", default: 512, effect: .now,
        help: "MiB all decoded loops may take together on disk (0 disables the cache); the least recently played make room.",
        parse: P.count(in: 0...1_048_576), format: { "\($0)" })
    public static let logLevel = Setting<LogLevel>(
        "log-level", valueName: "LEVEL", default: .info, effect: .now,
        help: "trace, debug, info, notice, warning, error or critical.",
        parse: P.choice(LogLevel.self), format: { $0.rawValue })

    // MARK: The command line only: where things are

    public static let socket = Setting<String?>(
        "socket", inFile: false, valueName: "PATH", default: nil,
        defaultWords: "$SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock", effect: .daemonNextStart,
        help: "The control socket.",
        parse: P.optionalPath, format: P.optional { $0 })
    public static let stateDirectory = Setting<String?>(
        "state-dir", inFile: false, valueName: "DIR", default: nil,
        defaultWords: "$XDG_STATE_HOME/soundscaped, else ~/.local/state/soundscaped", effect: .daemonNextStart,
        help: "The state database's directory.",
        parse: P.optionalPath, format: P.optional { $0 })
    public static let cacheDirectory = Setting<String?>(
        "cache-dir", inFile: false, valueName: "DIR|none", default: nil,
        defaultWords: "$XDG_CACHE_HOME/soundscaped/pcm, else ~/.cache/soundscaped/pcm", effect: .daemonNextStart,
        help: "Where decoded loops are kept, or none to keep none.",
        parse: { text, name, context throws(SettingError) in text == P.none ? P.none : try P.path(text, name, context) },
        format: P.optional { $0 })
    public static let latencyFrames = Setting<Int>(
        "latency-frames", inFile: false, valueName: "frames", default: 2048, effect: .daemonNextStart,
        help: "The PipeWire quantum asked for, in frames at 48 kHz (node.latency); larger means fewer wake-ups.",
        parse: P.count(in: 64...8192), format: { "\($0)" })
    public static let config = Setting<String?>(
        "config", inFile: false, valueName: "FILE", default: nil,
        defaultWords: "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf, else ~/.config/soundscaped/soundscaped.conf",
        effect: .daemonNextStart,
        help: "The config file.",
        parse: P.optionalPath, format: P.optional { $0 })
    /// For measuring what `StartupPages` saves (docs/performance.md); not for everyday use.
    public static let keepStartupPages = Setting<Bool>(
        "keep-startup-pages", inFile: false, valueName: "", default: false, effect: .daemonNextStart, isSwitch: true,
        isHidden: true, help: "Keep the pages startup touched mapped.",
        parse: P.bool, format: { "\($0)" })

    /// The table, in the order the docs and `--help` list it.
    public static let all: [any AnySetting] = [
        signerCommand, signerDirectory, signerEnvironment, signerEnvironmentFiles, signerCredentials, signerKeepRunning, signerStdin,
        signerStopSignal,
        signerStopTimeout, signerType, signerLivenessTimeout, signerRestartDelay, signerRestartMaxDelay,
        signerCrashLimit, signerHealthCommand, signerHealthExitCodes, signerHealthURL, signerHealthJSON, signerHealthInterval, signerHealthTimeout,
        signerHealthRetries,
        signerRestartOnUnhealthy, signerStartGrace, signerMemoryDenyWriteExecute, signerAddressFamilies,
        interruptionRoles, voipApplications, soundscapeDirectories, cacheSize, logLevel,
        socket, stateDirectory, cacheDirectory, latencyFrames, config, keepStartupPages,
    ]

    /// The setting with this key, nil for an unknown one.
    public static func named(_ key: String) -> (any AnySetting)? {
        all.first { $0.key == key }
    }

    /// The keys the file takes.
    public static var fileKeys: [String] { all.filter(\.inFile).map(\.key) }
}

/// The log levels, as swift-log names them (Core imports nothing, so not its type).
public enum LogLevel: String, Sendable, Equatable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}
