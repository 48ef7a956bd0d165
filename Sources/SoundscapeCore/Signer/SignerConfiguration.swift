/// How to run the signer host: what its process gets (command, directory,
/// environment, stdin, the health command) and, as `machine`, the timing and limits
/// `SignerMachine` decides with. Both come from the settings (`Settings`), whose
/// table holds every default.
public struct SignerConfiguration: Sendable, Equatable {
    /// Program and arguments; the program is looked up in `PATH` when it has no slash.
    public var command: [String]
    public var workingDirectory: String?
    /// Added to (and overriding) the daemon's environment.
    public var environment: [String: String]
    /// Files of `NAME=VALUE` lines (`EnvironmentFile`), read at every start, over `environment`.
    public var environmentFiles: [String]
    /// What it finds in `$CREDENTIALS_DIRECTORY`, written anew for every start.
    public var credentials: [SignerCredential]
    /// What its standard input is.
    public var stdin: SignerStdin
    /// A command whose exit status says whether the signer signs; nil: none.
    public var healthCommand: [String]?
    /// What the health command's exit status means.
    public var healthExitCodes: SignerHealthExitCodes
    /// The built-in HTTP check, which a signer has instead of a command; nil: none.
    public var healthHTTP: SignerHTTPCheck?
    /// What its processes may do, beyond what the unit imposes on everything.
    public var sandbox: SignerSandbox
    /// Timing, limits and the health check's rhythm.
    public var machine: SignerMachine.Configuration

    /// From `values`; nil when no signer command is set.
    public init?(_ values: SettingValues) {
        guard let command = values[Settings.signerCommand] else { return nil }
        self.init(command: command, values: values)
    }

    /// `command` with `values` for the rest (by default, every default).
    public init(command: [String], values: SettingValues = SettingValues()) {
        self.command = command
        workingDirectory = values[Settings.signerDirectory]
        environment = values[Settings.signerEnvironment]
        environmentFiles = values[Settings.signerEnvironmentFiles]
        credentials = values[Settings.signerCredentials]
        stdin = values[Settings.signerStdin]
        healthCommand = values[Settings.signerHealthCommand]
        healthExitCodes = values[Settings.signerHealthExitCodes]
        healthHTTP = values[Settings.signerHealthURL].map { SignerHTTPCheck(url: $0, condition: values[Settings.signerHealthJSON]) }
        sandbox = SignerSandbox(
            memoryDenyWriteExecute: values[Settings.signerMemoryDenyWriteExecute],
            addressFamilies: values[Settings.signerAddressFamilies])
        machine = SignerMachine.Configuration(values, healthChecked: healthCommand != nil || healthHTTP != nil)
    }

    /// Health settings that do not go together: the one to blame and why, nil when
    /// they do. A signer has one health check, a command or a URL, so both set is
    /// refused rather than one silently winning; a JSON condition needs its URL.
    public static func healthProblem(_ values: SettingValues) -> (setting: any AnySetting, problem: String)? {
        if values.isSet(Settings.signerHealthURL), values.isSet(Settings.signerHealthCommand) {
            return (
                Settings.signerHealthURL,
                "\(Settings.signerHealthURL.key) and \(Settings.signerHealthCommand.key) are both set; a signer has one health check: keep one"
            )
        }
        if values.isSet(Settings.signerHealthJSON), !values.isSet(Settings.signerHealthURL) {
            return (
                Settings.signerHealthJSON,
                "\(Settings.signerHealthJSON.key) is a condition on \(Settings.signerHealthURL.key)'s answer, which is not set"
            )
        }
        return nil
    }
}

/// `signer-stdin`: what the signer reads on its standard input.
public enum SignerStdin: Sendable, Equatable, CustomStringConvertible {
    /// Every event as a JSON line (a signer written for soundscaped).
    case events
    /// /dev/null: end of file at once, as systemd's `StandardInput=null`.
    case null
    /// The file's bytes, then end of file (a passphrase file). Refused unless it is a
    /// regular file owned by the user with no group or other access.
    case file(String)

    public static let syntax = "events, null or file:PATH (an absolute path)"

    /// `events`, `null` or `file:/absolute/path`; nil for anything else.
    public init?(parsing text: String) {
        switch text {
        case "events": self = .events
        case "null": self = .null
        default:
            guard text.hasPrefix("file:") else { return nil }
            let path = String(text.dropFirst("file:".count))
            guard FilePaths.isAbsolute(path), path.utf8.count > 1 else { return nil }
            self = .file(path)
        }
    }

    public var description: String {
        switch self {
        case .events: "events"
        case .null: "null"
        case .file(let path): "file:\(path)"
        }
    }

    /// What is wrong with a stdin file, from `stat` of it (nil: nothing). The file holds a
    /// secret: anyone who could change it could feed the signer, anyone who could read it
    /// could take the passphrase.
    public static func fileProblem(isRegular: Bool, owner: UInt32, mode: UInt32, user: UInt32) -> String? {
        guard isRegular else { return "it is not a regular file" }
        guard owner == user else { return "it is owned by uid \(owner), not by the user running soundscaped (uid \(user))" }
        let access = mode & 0o077
        guard access == 0 else {
            let permissions = String(mode & 0o777, radix: 8)
            return
                "its group or others have access (mode \(String(repeating: "0", count: max(0, 4 - permissions.count)) + permissions)); chmod 600 it"
        }
        return nil
    }
}

/// `signer-stop-signal`: the signal that asks the signer to stop. Linux's numbers (the
/// same on every architecture Debian ships soundscaped for).
public enum SignerStopSignal: String, Sendable, Equatable, CaseIterable {
    case term = "SIGTERM"
    case int = "SIGINT"
    case hup = "SIGHUP"
    case quit = "SIGQUIT"
    case usr1 = "SIGUSR1"
    case usr2 = "SIGUSR2"

    public var number: Int32 {
        switch self {
        case .term: 15
        case .int: 2
        case .hup: 1
        case .quit: 3
        case .usr1: 10
        case .usr2: 12
        }
    }

    /// `SIGINT`, `INT`, `sigint` or `int`.
    public init?(parsing text: String) {
        let upper = text.uppercased()
        guard let signal = Self(rawValue: upper.hasPrefix("SIG") ? upper : "SIG" + upper) else { return nil }
        self = signal
    }

    public static let syntax = "SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2 (the SIG prefix is optional)"
}

/// `signer-type`, as systemd's `Type=` for these two.
public enum SignerType: String, Sendable, Equatable, CaseIterable {
    /// Running (and ready) once spawned.
    case simple
    /// Starting until it sends `READY=1` on `$NOTIFY_SOCKET`.
    case notify
}
