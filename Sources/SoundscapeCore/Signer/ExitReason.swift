/// How a signer host process ended.
public enum ExitReason: Sendable, Equatable, CustomStringConvertible {
    case exited(code: Int32)
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "killed by signal \(signal)\(Self.names[signal].map { " (\($0))" } ?? "")"
        }
    }

    /// The signal's name (`SIGTRAP`), nil for an exit or an unnamed signal.
    public var signalName: String? {
        guard case .signaled(let signal) = self else { return nil }
        return Self.names[signal]
    }

    /// Linux's numbers, the same on every architecture Debian ships soundscaped for.
    private static let names: [Int32: String] = [
        1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
        9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
        24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS",
    ]
}
