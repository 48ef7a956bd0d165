/// The single place that decides what the player does.
///
/// Commands (what the user wants) and facts (what the audio output reports)
/// go in; actions (what to tell the output, what to persist, which event to
/// send) come out. It does no I/O and reads no clock — the caller passes
/// `now` — so every sequence of facts can be replayed in a unit test.
///
/// The machine reconciles after every input: it compares what is wanted with
/// what is true and issues the one action that closes the gap. No handler
/// ever decides on its own, and no single "it ended" signal is trusted: the
/// same reconcile runs on each fact and on ticks.
public struct PlayerMachine: Sendable {
    public struct Configuration: Sendable {
        /// How long an output may take from "start" to streaming before we
        /// stop waiting quietly and report `resumeFailed`.
        public var startTimeout: Duration

        /// How long each watchdog step gets to bring audio back before the next, stronger one.
        public var reviveInterval: Duration

        /// How long the graph may hold our linked, active stream paused before
        /// that counts as the server pausing us (a shorter pause is a re-link).
        public var serverPauseGrace: Duration

        public init(startTimeout: Duration = .seconds(3), reviveInterval: Duration = .seconds(3),
                    serverPauseGrace: Duration = .seconds(1)) {
            self.startTimeout = startTimeout
            self.reviveInterval = reviveInterval
            self.serverPauseGrace = serverPauseGrace
        }
    }

    /// What the audio output is doing, as far as we know.
    public enum Output: Sendable, Equatable {
        /// Not connected to a PipeWire server.
        case unavailable
        /// Connected; the stream exists but is inactive (the sink may suspend).
        case idle
        /// Told to play `soundscape`; `streaming` once the graph runs us.
        /// `since` is when it last was not streaming, for the start timeout.
        case active(soundscape: SoundscapeID, streaming: Bool, since: ContinuousClock.Instant)
        /// Fading out before going idle.
        case stopping
    }

    public enum Input: Sendable, Equatable {
        case play(SoundscapeID)
        case stop
        case setVolume(Volume)
        /// The output connected to a server and is idle.
        case outputConnected
        /// The output lost its server (or never had one).
        case outputDisconnected(reason: String)
        /// The stream started or stopped being scheduled by the graph.
        case outputStreaming(Bool)
        /// A fade-out ended and the stream is inactive.
        case outputStopped
        /// The sink we are linked to, by `node.name`.
        case routeChanged(String?)
        /// A soundscape could not be decoded; `fallback` is what to play instead, if anything.
        case decodeFailed(SoundscapeID, message: String, fallback: SoundscapeID?)
        /// The output should play but no audio cycle ran for its grace period.
        case outputStalled
        /// Cycles run again after `outputStalled`.
        case outputFlowing
        /// The graph's sinks, default sink and calls changed.
        case graphChanged(GraphFacts)
        /// The user changed a preference (or they were loaded at start-up).
        case setPreferences(Preferences)
        /// Time passed; re-evaluate deadlines.
        case tick
    }

    /// The watchdog's escalation, gentlest first.
    public enum ReviveStep: Sendable, Equatable, CaseIterable {
        /// Make the stream inactive and active again.
        case reactivate
        /// Replace the stream on the same connection.
        case recreateStream
        /// Drop the connection to PipeWire and connect again.
        case reconnect
    }

    public enum Action: Sendable, Equatable {
        case startOutput(SoundscapeID, Volume)
        case switchSoundscape(SoundscapeID)
        case setVolume(Volume)
        case stopOutput
        case persist(DesiredState)
        case persistPreferences(Preferences)
        /// `cause` is the machine-readable why: an `InterruptionCause` or a `RouteChangeCause`.
        case emit(EventReason, message: String?, cause: String? = nil)
        /// Ask for a `.tick` at this instant (a start deadline).
        case scheduleTick(at: ContinuousClock.Instant)
        /// The watchdog's next step to bring stalled audio back.
        case revive(ReviveStep)
        /// Link our stream to this sink (`target.object`); nil leaves it to the session manager.
        case setTarget(String?)
    }

    private typealias Announcement = (reason: EventReason, message: String?, cause: String?)

    /// A stall being worked on: the step last taken and when the next is due.
    struct Stall: Sendable, Equatable {
        var step: ReviveStep
        var nextStepAt: ContinuousClock.Instant
        var failureReported = false
    }

    public let configuration: Configuration
    public private(set) var desired: DesiredState
    public private(set) var output: Output = .unavailable
    public private(set) var route: String?
    /// The last sink we were linked to (route changes are judged against it).
    private var lastRoute: String?
    /// When the current route appeared: a stream just re-linked is not "paused by the server" yet.
    private var routeSince: ContinuousClock.Instant = .now
    /// The state last announced in an event; `state` may lag behind the
    /// output for the short moment a start takes, to avoid announcing a
    /// transient the user never hears.
    public private(set) var publishedState: PlayerState
    /// Whether the graph runs our stream, as last reported, whatever we asked of it;
    /// a play during a stop's fade-out finds the stream still running.
    public private(set) var graphStreaming = false
    /// Whether the current play session has been audible yet: the first time is
    /// `started`, any later return to playing is `resumed`.
    private var sessionHasPlayed = false
    private var disconnectReason: String?
    /// A `serverLost` went out, so the server's return is news (`serverRestored`).
    private var serverLostAnnounced = false
    /// The watchdog's current stall, if any.
    private(set) var stall: Stall?
    /// A `stalled` went out, so the return to playing is `recovered`.
    private var stallAnnounced = false
    public private(set) var preferences: Preferences
    /// The graph as last reported; nil until the output has seen it.
    public private(set) var graph: GraphFacts?
    /// The sink we last asked to be linked to, on this connection (`.some(nil)`: none).
    private var appliedTarget: String??
    /// Whether an interruption is lowering the volume right now.
    public private(set) var ducking = false
    /// Whether the last reconcile found an interruption that pauses us.
    private var pausedByInterruption = false

    public init(desired: DesiredState, preferences: Preferences = .default, configuration: Configuration = .init()) {
        self.desired = desired
        self.preferences = preferences
        self.configuration = configuration
        self.publishedState = .stopped
    }

    // MARK: Interruptions and routes

    /// What outranks us right now (only meaningful while the user wants playback).
    public func interruptions(now: ContinuousClock.Instant) -> Set<InterruptionCause> {
        var causes: Set<InterruptionCause> = []
        if let graph {
            if !graph.communicationStreams.isEmpty { causes.insert(.communicationStream) }
            if graph.defaultIsCallRoute || graph.sink(named: route)?.isCallRoute == true { causes.insert(.callRoute) }
        }
        if case .active(_, streaming: false, let since) = output, route != nil, sessionHasPlayed,
           now - max(since, routeSince) >= configuration.serverPauseGrace {
            causes.insert(.serverPaused)
        }
        return causes
    }

    /// A call route always pauses us (we never play into one); a call pauses
    /// us in `pause` mode. `serverPaused` is the server's doing, not ours to act on.
    private func pauses(_ causes: Set<InterruptionCause>) -> Bool {
        causes.contains(.callRoute) || (causes.contains(.communicationStream) && preferences.interruptionMode == .pause)
    }

    private func ducks(_ causes: Set<InterruptionCause>) -> Bool {
        !pauses(causes) && causes.contains(.communicationStream) && preferences.interruptionMode == .duck
    }

    /// The volume to apply: the user's, or its ducked fraction.
    public var effectiveVolume: Volume {
        ducking ? Volume(clamping: desired.volume.percent * preferences.duckLevel / 100) : desired.volume
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
    private var noUsableSink: Bool {
        guard let graph else { return false }
        return !graph.sinks.contains { !$0.isCallRoute }
    }

    // MARK: Derived state

    /// The state right now, or nil while a start is still within its grace period.
    func currentState(now: ContinuousClock.Instant) -> PlayerState? {
        guard desired.wantsPlaying else { return .stopped }
        let causes = interruptions(now: now)
        if pauses(causes) || causes.contains(.serverPaused) { return .interrupted }
        if stall != nil || noUsableSink { return .recovering }
        switch output {
        case .active(_, streaming: true, _):
            return .playing
        case .active(_, streaming: false, let since):
            return now - since < configuration.startTimeout ? nil : .recovering
        case .unavailable, .idle, .stopping:
            return .recovering
        }
    }

    /// True while a start has been commanded but not yet confirmed by the graph.
    public func isSettling(now: ContinuousClock.Instant) -> Bool {
        currentState(now: now) == nil
    }

    public func status(now: ContinuousClock.Instant) -> PlayerStatus {
        let state = currentState(now: now) ?? publishedState
        var status = PlayerStatus(
            state: state, isPlaying: state == .playing, soundscape: desired.soundscape,
            volume: desired.volume, route: route, wantsPlaying: desired.wantsPlaying
        )
        status.interruptions = interruptions(now: now).sorted().map(\.rawValue)
        status.ducked = ducking
        return status
    }

    // MARK: Transitions

    public mutating func handle(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        var announcement: Announcement?

        switch input {
        case .play(let soundscape):
            let changedSoundscape = soundscape != desired.soundscape
            if changedSoundscape || !desired.wantsPlaying {
                if !desired.wantsPlaying { sessionHasPlayed = false }
                desired.soundscape = soundscape
                desired.wantsPlaying = true
                actions.append(.persist(desired))
                // During a session the switch itself is the news; from silence, `started` says it.
                if changedSoundscape, publishedState != .stopped {
                    announcement = (.soundscapeChanged, nil, nil)
                }
            }

        case .stop:
            stall = nil
            stallAnnounced = false
            if desired.wantsPlaying {
                desired.wantsPlaying = false
                actions.append(.persist(desired))
            }

        case .setVolume(let volume):
            if volume != desired.volume {
                desired.volume = volume
                actions.append(.persist(desired))
                actions.append(.setVolume(effectiveVolume))
                announcement = (.volumeChanged, nil, nil)
            }

        case .outputConnected:
            if output == .unavailable {
                output = .idle
                graphStreaming = false
                appliedTarget = nil
                if serverLostAnnounced { announcement = (.serverRestored, nil, nil) }
                serverLostAnnounced = false
            }

        case .outputDisconnected(let reason):
            output = .unavailable
            graph = nil
            appliedTarget = nil
            graphStreaming = false
            disconnectReason = reason
            // The server's loss is its own cause; reconnecting is what the last watchdog step does anyway.
            stall = nil

        case .outputStalled:
            // Only a stream the graph claims to run can stall; a paused one is waiting, which
            // the start deadline covers.
            if case .active(_, streaming: true, _) = output, desired.wantsPlaying, stall == nil {
                let next = now + configuration.reviveInterval
                stall = Stall(step: .reactivate, nextStepAt: next)
                actions += [.revive(.reactivate), .scheduleTick(at: next)]
            }

        case .outputFlowing:
            stall = nil

        case .outputStreaming(let streaming):
            graphStreaming = streaming
            if case .active(let soundscape, let wasStreaming, _) = output, wasStreaming != streaming {
                output = .active(soundscape: soundscape, streaming: streaming, since: now)
                if !streaming {
                    // A linked stream the graph holds paused becomes `serverPaused` after a grace period.
                    if route != nil && sessionHasPlayed {
                        actions.append(.scheduleTick(at: now + configuration.serverPauseGrace))
                    }
                    actions.append(.scheduleTick(at: now + configuration.startTimeout))
                }
            }

        case .outputStopped:
            if output == .stopping { output = .idle }

        case .routeChanged(let newRoute):
            if newRoute != route {
                route = newRoute
                // (A route that appears while the stream waits is judged at the start deadline's tick.)
                routeSince = now
                // A move unlinks before it links again, so compare with the last sink we were on,
                // not with the nil in between.
                let previous = lastRoute
                if let newRoute { lastRoute = newRoute }
                if let previous, let newRoute, newRoute != previous, desired.wantsPlaying {
                    let cause: RouteChangeCause
                    if let graph, graph.sink(named: previous) == nil {
                        cause = .deviceUnavailable
                    } else if newRoute == preferences.pinnedSink {
                        cause = .pinnedDeviceReturned
                    } else {
                        cause = .newDefault
                    }
                    announcement = (.routeChanged, "\(previous) → \(newRoute)", cause.rawValue)
                }
            }

        case .graphChanged(let facts):
            graph = facts

        case .setPreferences(let newPreferences):
            if newPreferences != preferences {
                let oldLevel = preferences.duckLevel
                preferences = newPreferences
                actions.append(.persistPreferences(newPreferences))
                // A new duck level applies at once to a duck under way.
                if ducking && oldLevel != newPreferences.duckLevel { actions.append(.setVolume(effectiveVolume)) }
            }

        case .decodeFailed(let soundscape, let message, let fallback):
            announcement = (.decodeError, message, nil)
            if soundscape == desired.soundscape {
                let before = desired
                if let fallback, fallback != soundscape {
                    desired.soundscape = fallback
                } else {
                    desired.wantsPlaying = false
                }
                if desired != before { actions.append(.persist(desired)) }
            }

        case .tick:
            if var current = stall, now >= current.nextStepAt {
                let steps = ReviveStep.allCases
                let next = steps[min(steps.firstIndex(of: current.step)! + 1, steps.count - 1)]
                if current.step == .reconnect && !current.failureReported {
                    // Even a fresh connection did not help: say so, and keep trying.
                    current.failureReported = true
                    announcement = (.resumeFailed, "audio is still stalled after reconnecting to PipeWire", nil)
                }
                current.step = next
                current.nextStepAt = now + configuration.reviveInterval
                stall = current
                actions += [.revive(next), .scheduleTick(at: current.nextStepAt)]
            }
        }

        actions += reconcileInterruptions(now: now, announcement: &announcement)
        actions += reconcile(now: now)
        actions += reconcileTarget()
        actions += publish(now: now, announcement: announcement)
        return actions
    }

    /// Ducking, the end of a pausing interruption without auto-resume, and the
    /// deadline for `serverPaused`: all derived from facts on every input.
    private mutating func reconcileInterruptions(now: ContinuousClock.Instant, announcement: inout Announcement?) -> [Action] {
        var actions: [Action] = []
        // Without graph facts (no server) nothing is known about calls: keep the last judgement.
        guard graph != nil || !desired.wantsPlaying else { return [] }
        let causes = desired.wantsPlaying ? interruptions(now: now) : []
        let pausing = pauses(causes)
        // "Ended" means the call and the call route are gone, not that the mode changed.
        let interruptionEnded = causes.isDisjoint(with: [.communicationStream, .callRoute])
        if pausedByInterruption && interruptionEnded && desired.wantsPlaying && !preferences.autoResume {
            desired.wantsPlaying = false
            actions.append(.persist(desired))
            announcement = (.stopped, "the interruption ended; auto-resume is off", nil)
        }
        pausedByInterruption = pausing && desired.wantsPlaying

        let shouldDuck = desired.wantsPlaying && ducks(causes)
        if shouldDuck != ducking {
            ducking = shouldDuck
            if shouldDuck {
                actions.append(.setVolume(effectiveVolume))
                announcement = announcement ?? (.interrupted, "ducked to \(preferences.duckLevel)% for a call",
                                                InterruptionCause.communicationStream.rawValue)
            } else if desired.wantsPlaying && !pausing && interruptionEnded {
                // The call is over and we keep playing: back to full volume, and say so.
                actions.append(.setVolume(effectiveVolume))
                announcement = announcement ?? (.resumed, "the call ended; volume restored", nil)
            }
            // Otherwise we are about to fade out (stop, or a pausing interruption): the
            // ducked level stays until then, and the next start uses the full volume.
        }
        return actions
    }

    /// Keeps our stream linked where `desiredTarget` says, while connected.
    private mutating func reconcileTarget() -> [Action] {
        guard output != .unavailable, graph != nil else { return [] }
        let target = desiredTarget()
        if let applied = appliedTarget, applied == target { return [] }
        // With no usable sink there is nothing to ask for; keep the last request.
        if target == nil && appliedTarget != nil { return [] }
        appliedTarget = .some(target)
        return target.map { [.setTarget($0)] } ?? []
    }

    /// Closes the gap between what is wanted and what the output does.
    private mutating func reconcile(now: ContinuousClock.Instant) -> [Action] {
        let wantsAudio = desired.wantsPlaying && !pausedByInterruption
        switch (wantsAudio, output) {
        case (true, .idle), (true, .stopping):
            // From `.stopping` the stream may still run (the fade-out is simply reversed).
            let streaming = output == .stopping && graphStreaming
            output = .active(soundscape: desired.soundscape, streaming: streaming, since: now)
            return [.startOutput(desired.soundscape, effectiveVolume), .scheduleTick(at: now + configuration.startTimeout)]
        case (true, .active(let playing, let streaming, let since)) where playing != desired.soundscape:
            output = .active(soundscape: desired.soundscape, streaming: streaming, since: since)
            return [.switchSoundscape(desired.soundscape)]
        case (false, .active):
            output = .stopping
            return [.stopOutput]
        default:
            return []
        }
    }

    /// Emits at most one event per input: the state transition if there is one
    /// (it carries the full status, so other changes ride along), otherwise the
    /// input's own announcement.
    private mutating func publish(now: ContinuousClock.Instant, announcement: Announcement?) -> [Action] {
        guard let state = currentState(now: now), state != publishedState else {
            return announcement.map { [.emit($0.reason, message: $0.message, cause: $0.cause)] } ?? []
        }
        let previous = publishedState
        publishedState = state
        let reason: EventReason
        var message: String?
        var cause: String?
        switch state {
        case .stopped:
            reason = announcement?.reason == .decodeError ? .decodeError : .stopped
        case .playing:
            reason = stallAnnounced ? .recovered : (sessionHasPlayed || previous == .interrupted) ? .resumed : .started
            sessionHasPlayed = true
            stallAnnounced = false
        case .recovering:
            if stall != nil {
                reason = .stalled
                stallAnnounced = true
            } else if noUsableSink {
                reason = .routeChangeFailed
                message = "no sink to play to; waiting for one"
            } else if output == .unavailable {
                reason = .serverLost
                serverLostAnnounced = true
                message = disconnectReason.map { "PipeWire is not available: \($0)" }
            } else {
                reason = .resumeFailed
            }
        case .interrupted:
            reason = .interrupted
            let causes = interruptions(now: now)
            let main = causes.contains(.callRoute) ? InterruptionCause.callRoute
                : causes.contains(.communicationStream) && pauses(causes) ? .communicationStream : .serverPaused
            cause = main.rawValue
            message = describe(main)
        }
        // An input's own words go with the event only when they explain it.
        if let announcement, announcement.reason == reason, announcement.message != nil {
            message = announcement.message
            cause = announcement.cause ?? cause
        }
        return [.emit(reason, message: message, cause: cause)]
    }

    private func describe(_ cause: InterruptionCause) -> String {
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
        }
    }
}
