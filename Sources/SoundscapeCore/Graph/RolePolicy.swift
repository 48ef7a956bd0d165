/// A sink's place in WirePlumber 0.5's role-based policy (0.5.4 and later,
/// opt-in: the `media-role-nodes.conf` example). Each `loopback.sink.role.*`
/// loopback's sink (`input.loopback.sink.role.<role>`) carries
/// `policy.role-based.target = true`, a priority and what its streams do to
/// the links of others. WirePlumber keeps one priority link per media class,
/// the role link into the highest-priority sink (the latest of equals); every
/// other role link gets its action (`linking/rescan-media-role-links.lua`):
/// `mix` keeps it, `duck` lowers the loopback's volume, `cork` deactivates it,
/// which destroys its PipeWire links (`module-si-standard-link.c`) while the
/// streams stay as they are. A set `suspend.playback` in the `default`
/// metadata deactivates every role link.
public struct RolePolicy: Sendable, Equatable {
    public enum Action: String, Sendable, Equatable {
        case mix
        case duck
        case cork
    }

    public var priority: Int
    /// What this sink's streams, holding the priority link, do to a role link of the same priority.
    public var samePriority: Action
    /// What they do to a role link of a lower priority.
    public var lowerPriority: Action

    public init(priority: Int, samePriority: Action = .mix, lowerPriority: Action = .mix) {
        self.priority = priority
        self.samePriority = samePriority
        self.lowerPriority = lowerPriority
    }

    /// The policy of a sink with these properties; nil unless it is a target of
    /// the role-based policy. Missing values are WirePlumber's defaults
    /// (priority 0, `mix`); an action it does not know it leaves alone, as `mix`.
    public init?(properties: [String: String]) {
        guard let target = properties["policy.role-based.target"], target.lowercased() == "true" || target == "1" else {
            return nil
        }
        priority = properties["policy.role-based.priority"].flatMap { Int($0) } ?? 0
        samePriority = properties["policy.role-based.action.same-priority"].flatMap(Action.init(rawValue:)) ?? .mix
        lowerPriority = properties["policy.role-based.action.lower-priority"].flatMap(Action.init(rawValue:)) ?? .mix
    }

    /// What this sink's streams, holding the priority link, do to a role link of `priority`.
    func action(toward priority: Int) -> Action {
        self.priority == priority ? samePriority : lowerPriority
    }
}

/// Why the role-based policy holds a link inactive.
public enum RoleCork: Sendable, Equatable {
    /// `suspend.playback` is set in the `default` metadata.
    case playbackSuspended
    /// A stream in the sink named here holds the priority link, and corks ours.
    case outranked(by: String)
}

extension GraphFacts {
    /// Whether, and why, the role-based policy holds a link into the sink
    /// `name` corked: the sink is a role-policy target, and playback is
    /// suspended or the streams of a sink of higher (or equal) priority cork
    /// links of its priority. Meaningful for a stream that is not linked: the
    /// policy destroys a corked link's PipeWire links.
    public func roleCork(ofLinkInto name: String) -> RoleCork? {
        guard let ours = sink(named: name)?.rolePolicy else { return nil }
        if playbackSuspended { return .playbackSuspended }
        let holders = sinks.filter { ($0.rolePolicy?.priority ?? .min) >= ours.priority && $0.linkedStreams > 0 }
        guard let top = holders.map({ $0.rolePolicy!.priority }).max() else { return nil }
        // Among equals WirePlumber picks the latest linked, which the graph does not show: any that corks does.
        let corker = holders.first { $0.rolePolicy!.priority == top && $0.rolePolicy!.action(toward: ours.priority) == .cork }
        return corker.map { .outranked(by: $0.name) }
    }
}
