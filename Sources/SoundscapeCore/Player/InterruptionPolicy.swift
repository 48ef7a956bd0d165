/// Calls, call routes, the server pausing us, the role-based policy corking
/// us, and the sink we play to: what outranks us right now and where our
/// stream belongs.
///
/// A part of `PlayerMachine`, which feeds it the graph's facts and carries out
/// what it decides. Like the machine it does no I/O and reads no clock.
struct InterruptionPolicy: Sendable {
    /// What an interruption does to playback right now.
    enum Effect: Sendable, Equatable {
        case none
        /// Playing on at `duckLevel` percent of the user's volume (interruption mode `duck`).
        case ducking
        /// Paused for it: the output fades out and waits.
        case pausing
    }

    /// Our stream's link to a sink, as the graph reports it.
    enum Link: Sendable, Equatable {
        case never
        /// Not linked now; `last` is the sink we were on. A move unlinks before it
        /// links again, so a route change is judged against `last`, not the gap.
        case unlinked(last: String)
        /// Linked to `sink` since `since`: a stream just re-linked is not "paused by the server" yet.
        case linked(sink: String, since: ContinuousClock.Instant)
    }

    /// WirePlumber's role-based policy holding our link (see `roleCork`).
    enum Cork: Sendable, Equatable {
        case none
        /// The graph shows our link corked, for this reason.
        case held(RoleCork)
        /// What corked us is gone since `since`: WirePlumber links us again at
        /// once, and the graph runs our stream again, which takes a moment.
        /// Until it does, or `corkReleaseGrace` has passed, the cork goes on, so
        /// that moment is not judged a failed start.
        case releasing(RoleCork, since: ContinuousClock.Instant)
    }

    /// What `reconcile` found for the machine to act on.
    struct Outcome: Sendable, Equatable {
        /// A pausing interruption ended and auto-resume is off: the session stays
        /// paused until the user plays, with this news (it outranks the input's own).
        var pause: PlayerMachine.Announcement?
        /// A duck began or ended: the volume to apply changed.
        var volumeChanged = false
        /// News of that duck, unless the input has its own.
        var duckNews: PlayerMachine.Announcement?
        /// When to judge again: the end of a releasing cork's grace.
        var tick: ContinuousClock.Instant?
    }

    var preferences: Preferences
    let serverPauseGrace: Duration
    /// How long the return from a cork may take: as long as a start.
    let corkReleaseGrace: Duration
    /// The graph as last reported; nil until the output has seen it (and after it lost the server).
    private(set) var graph: GraphFacts?
    private(set) var link: Link = .never
    private(set) var effect: Effect = .none
    private(set) var cork: Cork = .none

    init(preferences: Preferences, serverPauseGrace: Duration, corkReleaseGrace: Duration = .seconds(3)) {
        self.preferences = preferences
        self.serverPauseGrace = serverPauseGrace
        self.corkReleaseGrace = corkReleaseGrace
    }

    /// The sink our stream is linked to now.
    var route: String? {
        if case .linked(let sink, _) = link { sink } else { nil }
    }

    /// The sink we were last linked to, whether or not we are linked now.
    private var lastSink: String? {
        switch link {
        case .never: nil
        case .unlinked(let last): last
        case .linked(let sink, _): sink
        }
    }

    // MARK: Facts

    mutating func graphChanged(_ facts: GraphFacts) {
        graph = facts
    }

    /// Without a server nothing is known about sinks or calls.
    mutating func serverLost() {
        graph = nil
        cork = .none
    }

    /// Records the new link; returns the news of a move from one sink to another
    /// while the user wants playback.
    mutating func routeChanged(
        to newRoute: String?, wantsPlaying: Bool,
        now: ContinuousClock.Instant
    ) -> PlayerMachine.Announcement? {
        guard newRoute != route else { return nil }
        let previous = lastSink
        if let newRoute {
            link = .linked(sink: newRoute, since: now)
        } else if let previous {
            link = .unlinked(last: previous)
        }
        guard let previous, let newRoute, newRoute != previous, wantsPlaying else { return nil }
        let cause: RouteChangeCause
        if let graph, graph.sink(named: previous) == nil {
            cause = .deviceUnavailable
        } else if newRoute == preferences.pinnedSink {
            cause = .pinnedDeviceReturned
        } else {
            cause = .newDefault
        }
        return PlayerMachine.Announcement(.routeChanged, "\(previous) → \(newRoute)", cause: cause.rawValue)
    }

    // MARK: Judgements

    /// What outranks us right now (only meaningful while the user wants playback).
    /// The server pausing us counts only once the session has been audible, for a
    /// linked stream held paused longer than `serverPauseGrace`.
    func causes(output: PlayerMachine.Output, sessionAudible: Bool, now: ContinuousClock.Instant) -> Set<InterruptionCause> {
        var causes: Set<InterruptionCause> = []
        if let graph {
            if !graph.communicationStreams.isEmpty { causes.insert(.communicationStream) }
            if graph.defaultIsCallRoute || graph.sink(named: route)?.isCallRoute == true { causes.insert(.callRoute) }
            if roleCork != nil { causes.insert(.roleCorked) }
        }
        if case .linked(_, let linkedSince) = link, case .active(_, streaming: false, let since) = output, sessionAudible,
            now - max(since, linkedSince) >= serverPauseGrace
        {
            causes.insert(.serverPaused)
        }
        return causes
    }

    /// A call route always pauses us (we never play into one); a call pauses
    /// us in `pause` mode. `serverPaused` and `roleCorked` are the graph's
    /// doing, not ours to act on: our stream stays ready for when it lets go.
    func pauses(_ causes: Set<InterruptionCause>) -> Bool {
        causes.contains(.callRoute) || (causes.contains(.communicationStream) && preferences.interruptionMode == .pause)
    }

    /// Whether these causes make the player `interrupted`: those that pause us,
    /// and the graph holding us silent.
    func interrupts(_ causes: Set<InterruptionCause>) -> Bool {
        pauses(causes) || causes.contains(.serverPaused) || causes.contains(.roleCorked)
    }

    /// Why WirePlumber's role-based policy holds our link corked, if it does
    /// (as of the last `reconcile`); it ends when the policy links us again.
    var roleCork: RoleCork? {
        switch cork {
        case .none: nil
        case .held(let cause), .releasing(let cause, _): cause
        }
    }

    /// What the graph shows: our stream is not linked, and the sink it is meant
    /// for (the one we ask for, else the last one it was on) is a role-policy
    /// sink whose links the policy holds inactive now. A corked link has no
    /// PipeWire links at all, so this is the only sign of it.
    private var corkInGraph: RoleCork? {
        guard let graph, route == nil, let sink = desiredTarget() ?? lastSink else { return nil }
        return graph.roleCork(ofLinkInto: sink)
    }

    /// Follows the cork; returns when to look again while one is releasing.
    private mutating func updateCork(output: PlayerMachine.Output, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if let cause = corkInGraph {
            cork = .held(cause)
            return nil
        }
        let streaming = if case .active(_, streaming: true, _) = output { true } else { false }
        switch cork {
        case .held(let cause) where !streaming:
            cork = .releasing(cause, since: now)
            return now + corkReleaseGrace
        case .releasing(_, let since) where !streaming && now - since < corkReleaseGrace:
            return nil
        default:
            cork = .none
            return nil
        }
    }

    private func ducks(_ causes: Set<InterruptionCause>) -> Bool {
        !pauses(causes) && causes.contains(.communicationStream) && preferences.interruptionMode == .duck
    }

    /// The volume to apply: the user's, or its ducked fraction.
    func effectiveVolume(for volume: Volume) -> Volume {
        effect == .ducking ? Volume(clamping: volume.percent * preferences.duckLevel / 100) : volume
    }

    /// Where our stream should be linked: the pinned sink while it exists, else
    /// the default; never a call route.
    func desiredTarget() -> String? {
        guard let graph else { return nil }
        if let pinned = preferences.pinnedSink, let sink = graph.sink(named: pinned), !sink.isCallRoute {
            return pinned
        }
        guard let name = graph.defaultSink, let sink = graph.sink(named: name), !sink.isCallRoute else { return nil }
        return name
    }

    /// No sink we may play to.
    var noUsableSink: Bool {
        guard let graph else { return false }
        return !graph.sinks.contains { !$0.isCallRoute }
    }

    /// The interruption an `interrupted` event names: a call route first, then
    /// a pausing call, then the role-based policy's cork.
    func mainCause(of causes: Set<InterruptionCause>) -> InterruptionCause {
        if causes.contains(.callRoute) { return .callRoute }
        if causes.contains(.communicationStream) && pauses(causes) { return .communicationStream }
        return causes.contains(.roleCorked) ? .roleCorked : .serverPaused
    }

    func describe(_ cause: InterruptionCause) -> String {
        switch cause {
        case .communicationStream:
            return "a call is active: " + (graph?.communicationStreams.joined(separator: ", ") ?? "")
        case .callRoute:
            if graph?.defaultIsCallRoute == true {
                return "the default output is a call route (\(graph?.defaultSink ?? "?"))"
            }
            return "our output is a call route (\(route ?? "?"))"
        case .serverPaused:
            return "the server paused our stream"
        case .signerDown, .muted, .asleep:
            // Not the graph's doing: PlayerMachine describes these.
            return cause.rawValue
        case .roleCorked:
            let sink = desiredTarget() ?? lastSink ?? "?"
            switch roleCork {
            case .outranked(let by)?:
                return "the role-based policy corked our link to \(sink) for a stream in \(by)"
            case .playbackSuspended?:
                return "the role-based policy corked our link to \(sink): playback is suspended"
            case nil:
                return "the role-based policy corked our link to \(sink)"
            }
        }
    }

    // MARK: Reconcile

    /// Ducking, and the end of a pausing interruption without auto-resume: both
    /// derived from the facts on every input, never from an "it ended" signal.
    mutating func reconcile(
        wantsPlaying: Bool, output: PlayerMachine.Output, sessionAudible: Bool,
        now: ContinuousClock.Instant
    ) -> Outcome {
        let tick = updateCork(output: output, now: now)
        // Without graph facts (no server) nothing is known about calls: keep the last judgement.
        guard graph != nil || !wantsPlaying else { return Outcome() }
        let causes = wantsPlaying ? self.causes(output: output, sessionAudible: sessionAudible, now: now) : []
        let pausing = pauses(causes)
        // "Ended" means the call and the call route are gone, not that the mode changed.
        let ended = causes.isDisjoint(with: [.communicationStream, .callRoute])
        var outcome = Outcome(tick: tick)
        var wants = wantsPlaying
        if effect == .pausing && ended && wants && !preferences.autoResume {
            wants = false
            outcome.pause = PlayerMachine.Announcement(.paused, "the interruption ended; auto-resume is off")
        }
        let wasDucking = effect == .ducking
        let shouldDuck = wants && ducks(causes)
        effect = shouldDuck ? .ducking : pausing && wants ? .pausing : .none
        if shouldDuck != wasDucking {
            if shouldDuck {
                outcome.volumeChanged = true
                outcome.duckNews = PlayerMachine.Announcement(
                    .interrupted, "ducked to \(preferences.duckLevel)% for a call",
                    cause: InterruptionCause.communicationStream.rawValue)
            } else if wants && !pausing && ended {
                // The call is over and we keep playing: back to full volume, and say so.
                outcome.volumeChanged = true
                outcome.duckNews = PlayerMachine.Announcement(.resumed, "the call ended; volume restored")
            }
            // Otherwise we are about to fade out (stop, or a pausing interruption): the
            // ducked level stays until then, and the next start uses the full volume.
        }
        return outcome
    }
}
