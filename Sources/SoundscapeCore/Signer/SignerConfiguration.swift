/// How to run the signer host, from `--signer-*` flags and the config file.
public struct SignerConfiguration: Sendable, Equatable {
    /// Program and arguments; the program is looked up in `PATH` when it has no slash.
    public var command: [String]
    public var workingDirectory: String?
    /// Added to (and overriding) the daemon's environment.
    public var environment: [String: String]
    /// Keep the signer running while audio is stopped (it still starts on the first `play`).
    public var keepRunningWhenStopped: Bool
    /// SIGTERM, then SIGKILL to the whole process group after this long.
    public var stopTimeout: Duration
    /// If set, the signer must print a `heartbeat` line at least this often, or it is treated as hung.
    public var livenessTimeout: Duration?
    /// First restart delay; it doubles per quick failure up to 60 s.
    public var restartDelay: Duration = .seconds(1)
    /// Quick failures in a row before giving up until the next `play`.
    public var crashLoopLimit = 5

    public init(command: [String], workingDirectory: String? = nil, environment: [String: String] = [:],
                keepRunningWhenStopped: Bool = false, stopTimeout: Duration = .seconds(5),
                livenessTimeout: Duration? = nil) {
        self.command = command
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.keepRunningWhenStopped = keepRunningWhenStopped
        self.stopTimeout = stopTimeout
        self.livenessTimeout = livenessTimeout
    }
}
