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

    private static let names: [Int32: String] = [
        1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
        9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
    ]
}

/// The signer host as `status` shows it.
public struct SignerStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        case stopped, starting, running, stopping, restarting, failed
    }

    public var state: State
    public var pid: Int?
    /// Restarts since the session began (the last `play` after a stop).
    public var restarts: Int
    /// How the last instance ended, in words.
    public var lastExit: String?
    /// What to call it in messages: its program's name (the daemon fills it in).
    public var name: String?

    public init(state: State, pid: Int?, restarts: Int, lastExit: String?) {
        self.state = state
        self.pid = pid
        self.restarts = restarts
        self.lastExit = lastExit
    }

    private enum CodingKeys: String, CodingKey { case state, pid, restarts, lastExit, name }

    /// `pid` and `lastExit` are written as explicit nulls, like `route`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(pid, forKey: .pid)
        try container.encode(restarts, forKey: .restarts)
        try container.encode(lastExit, forKey: .lastExit)
        try container.encodeIfPresent(name, forKey: .name)
    }
}
