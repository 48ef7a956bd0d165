/// The signer host as `status` shows it.
public struct SignerStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        case stopped, starting, running, stopping, restarting, failed
    }

    /// What the health check last said (`unknown` without one, or before its first verdict).
    /// `degraded`: it signs, but its check warns (a monitoring plugin's WARNING); not down.
    public enum Health: String, Sendable, Codable, CaseIterable {
        case unknown, healthy, unhealthy, degraded
    }

    public var state: State
    public var pid: Int?
    /// Restarts since the session began (the last `play` after a stop).
    public var restarts: Int
    /// How the last instance ended, in words.
    public var lastExit: String?
    /// The signal the last instance died of, by name (`SIGTRAP`); nil when it exited or none ended yet.
    public var lastExitSignal: String?
    /// What to call it in messages: its program's name (the daemon fills it in).
    public var name: String?
    public var health: Health
    /// Running and, for `signer-type = notify`, it has sent `READY=1`.
    public var ready: Bool
    /// Its own words: the last `STATUS=` it sent or the first line a passing health
    /// command printed (one line, at most `maximumStatusLength` characters).
    public var status: String?

    public static let maximumStatusLength = 200

    /// `ready` defaults to whether it runs: a `simple` signer is ready once spawned.
    public init(
        state: State, pid: Int?, restarts: Int, lastExit: String?, lastExitSignal: String? = nil,
        health: Health = .unknown, ready: Bool? = nil, status: String? = nil
    ) {
        self.state = state
        self.pid = pid
        self.restarts = restarts
        self.lastExit = lastExit
        self.lastExitSignal = lastExitSignal
        self.health = health
        self.ready = ready ?? (state == .running)
        self.status = status
    }

    /// One line of text from the signer as status shows it: control characters (line
    /// breaks, escapes, NULs) removed, spaces trimmed, at most `maximumStatusLength`
    /// characters; nil when nothing is left.
    public static func line(_ text: some StringProtocol) -> String? {
        var line = ""
        for scalar in text.unicodeScalars where scalar.properties.generalCategory != .control {
            line.unicodeScalars.append(scalar)
        }
        // Cut, then trimmed again: a cut right after a space must not leave it at the end
        // (a finding of Fuzz/ notify-message: cleaning a clean line changed it).
        let trimmed = line.trimmingSpaces().prefix(maximumStatusLength).trimmingSpaces()
        guard !trimmed.isEmpty else { return nil }
        return String(trimmed)
    }

    private enum CodingKeys: String, CodingKey { case state, pid, restarts, lastExit, lastExitSignal, name, health, ready, status }

    /// Fields a daemon before health checks did not send take their defaults; a health
    /// this client does not know (one a later daemon added) reads as `unknown`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(State.self, forKey: .state)
        pid = try container.decodeIfPresent(Int.self, forKey: .pid)
        restarts = try container.decode(Int.self, forKey: .restarts)
        lastExit = try container.decodeIfPresent(String.self, forKey: .lastExit)
        lastExitSignal = try container.decodeIfPresent(String.self, forKey: .lastExitSignal)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        // A value a later daemon may add is unknown here, not an error that loses the whole status.
        health = try container.decodeIfPresent(String.self, forKey: .health).flatMap(Health.init(rawValue:)) ?? .unknown
        ready = try container.decodeIfPresent(Bool.self, forKey: .ready) ?? (state == .running)
        status = try container.decodeIfPresent(String.self, forKey: .status)
    }

    /// `pid`, `lastExit` and `status` are written as explicit nulls, like `route`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(pid, forKey: .pid)
        try container.encode(restarts, forKey: .restarts)
        try container.encode(lastExit, forKey: .lastExit)
        try container.encodeIfPresent(lastExitSignal, forKey: .lastExitSignal)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encode(health, forKey: .health)
        try container.encode(ready, forKey: .ready)
        try container.encode(status, forKey: .status)
    }
}
