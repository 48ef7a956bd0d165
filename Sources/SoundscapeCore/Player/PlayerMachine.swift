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
///
/// It is built from parts, each with its state as an enum and a file of its own:
/// - the output reconcile (here): `Output`, the target we asked to be linked to;
/// - `InterruptionPolicy`: calls, call routes, the server pausing us, routes;
/// - `ReviveLadder`: the watchdog's escalation when audio stalls;
/// - `EventAnnouncer`: which event a change is worth.
/// Types that go in and out are in `PlayerMachine+Types.swift`.
public struct PlayerMachine: Sendable {
    public let configuration: Configuration
    public private(set) var desired: DesiredState
    public private(set) var output: Output = .connecting
    /// Whether the graph runs our stream, as last reported, whatever we asked of it;
    /// a play during a stop's fade-out finds the stream still running.
    public private(set) var graphStreaming = false
    private(set) var policy: InterruptionPolicy
    private var ladder: ReviveLadder
    private var announcer = EventAnnouncer()
    private var disconnectReason: String?
    /// The sink we last asked to be linked to, on this connection.
    private var target: TargetRequest = .none
    /// How the next start fades in: gently for the user's `play` until it is
    /// heard, promptly for every return after that (and for a session restored
    /// at start-up, which a crash may have cut off).
    private var startFade: FadeIn = .prompt
    /// The signer is down (and why), as `SignerMachine` last judged it.
    private(set) var signer: SignerAvailability = .up
    /// The session the last `.signerSession` said (none wanted before the first).
    private var announcedSession = false
    /// The sleep timer.
    public private(set) var sleep = SleepTimer()

    /// What we last asked of the session manager about our stream's link.
    private enum TargetRequest: Sendable, Equatable {
        case none
        case requested(String?)
    }

    public init(desired: DesiredState, preferences: Preferences = .default, configuration: Configuration = .init()) {
        self.desired = desired
        self.configuration = configuration
        policy = InterruptionPolicy(
            preferences: preferences, serverPauseGrace: configuration.serverPauseGrace,
            corkReleaseGrace: configuration.startTimeout)
        ladder = ReviveLadder(interval: configuration.reviveInterval)
    }

    public var preferences: Preferences { policy.preferences }
    /// The sink we are linked to, by `node.name`.
    public var route: String? { policy.route }
    /// The graph as last reported; nil until the output has seen it.
    public var graph: GraphFacts? { policy.graph }
    /// Whether an interruption is lowering the volume right now.
    public var ducking: Bool { policy.effect == .ducking }
    /// The state last announced in an event.
    public var publishedState: PlayerState { announcer.published }

    /// The volume to apply: the user's, or its ducked fraction.
    public var effectiveVolume: Volume { policy.effectiveVolume(for: desired.volume) }

    /// What outranks us right now (only meaningful while the user wants playback).
    public func interruptions(now: ContinuousClock.Instant) -> Set<InterruptionCause> {
        var causes = policy.causes(output: output, sessionAudible: announcer.session == .audible, now: now)
        if holdsOffForSigner { causes.insert(.signerDown) }
        if muted { causes.insert(.muted) }
        if asleep { causes.insert(.asleep) }
        return causes
    }

    /// Where our stream should be linked: the pinned sink while it exists, else
    /// the default; never a call route.
    func desiredTarget() -> String? {
        policy.desiredTarget()
    }

    // MARK: Derived state

    /// The state right now, or nil while a start is still within its grace period.
    func currentState(now: ContinuousClock.Instant) -> PlayerState? {
        switch desired.intent {
        case .stopped: return .stopped
        case .paused: return .paused
        case .playing: break
        }
        let causes = interruptions(now: now)
        if policy.interrupts(causes) || !causes.isDisjoint(with: [.signerDown, .muted, .asleep]) { return .interrupted }
        if ladder.isWorking || policy.noUsableSink { return .recovering }
        switch output {
        case .active(_, streaming: true, _):
            return .playing
        case .active(_, streaming: false, let since):
            return now - since < configuration.startTimeout ? nil : .recovering
        case .connecting, .unavailable, .idle, .stopping:
            return .recovering
        }
    }

    /// True while a start has been commanded but not yet confirmed by the
    /// graph, and until the first connection attempt is decided.
    public func isSettling(now: ContinuousClock.Instant) -> Bool {
        output == .connecting || currentState(now: now) == nil
    }

    public func status(now: ContinuousClock.Instant) -> PlayerStatus {
        // While a start settles the last published state stands (a hiccup is no news), but
        // for a start out of silence, which is `resuming`: a daemon restoring its session
        // was `stopped` for its first second.
        let state = currentState(now: now) ?? ([.stopped, .paused].contains(announcer.published) ? .resuming : announcer.published)
        var status = PlayerStatus(
            state: state, isPlaying: state == .playing, soundscape: desired.soundscape,
            volume: desired.volume, route: route, wantsPlaying: desired.wantsPlaying
        )
        status.layers = desired.mix.layers
        status.mix = desired.mix.name
        status.sleep = sleepStatus(now: now)
        if case .active(let mix, streaming: true, _) = output, mix.primary == .signerDownCue { status.cuePlaying = true }
        status.interruptions = interruptions(now: now).sorted().map(\.rawValue)
        status.ducked = ducking
        status.noSink = policy.noUsableSink
        return status
    }

    // MARK: Transitions

    public mutating func handle(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        var news: Announcement?

        switch input {
        case .play(let mix):
            // A play wakes the sound the sleep timer took away (and ends the timer): the
            // user's return to sound, so it fades in as a play does.
            if sleep.isAsleep { startFade = .gentle }
            actions += Self.sleepActions(sleep.cancel())
            let changedMix = mix != desired.mix
            if changedMix || !desired.wantsPlaying {
                // From a pause the session goes on: its return to sound is `resumed`.
                if desired.intent == .stopped { announcer.sessionBegins() }
                desired.mix = mix
                desired.intent = .playing
                startFade = .gentle
                actions.append(.persist(desired))
                // During a session the switch itself is the news; from silence, `started` says it.
                if changedMix, announcer.published != .stopped {
                    news = Announcement(.soundscapeChanged)
                }
            }

        case .setMix(let mix):
            if mix != desired.mix {
                desired.mix = mix
                actions.append(.persist(desired))
                news = Announcement(.layersChanged, mix.description)
            }

        case .sleep(let duration):
            if let duration {
                actions += Self.sleepActions(sleep.set(duration, now: now))
                news = Announcement(.sleepChanged, "the sound fades away in \(SleepTimer.describe(duration))")
            } else if sleep.state != .off {
                actions += Self.sleepActions(sleep.cancel())
                news = Announcement(.sleepChanged, "the sleep timer is off")
            }

        case .pause:
            ladder.reset()
            actions += Self.sleepActions(sleep.cancel())
            announcer.stopped()
            if desired.intent == .playing {
                desired.intent = .paused
                actions.append(.persist(desired))
            }

        case .stop:
            ladder.reset()
            actions += Self.sleepActions(sleep.cancel())
            announcer.stopped()
            if desired.intent != .stopped {
                desired.intent = .stopped
                actions.append(.persist(desired))
            }

        case .setVolume(let volume):
            if volume != desired.volume {
                desired.volume = volume
                actions.append(.persist(desired))
                actions.append(.setVolume(effectiveVolume))
                news = Announcement(.volumeChanged)
            }

        case .outputConnected:
            if !output.isConnected {
                output = .idle
                graphStreaming = false
                target = .none
                news = announcer.serverConnected()
            }

        case .outputDisconnected(let reason):
            output = .unavailable
            policy.serverLost()
            target = .none
            graphStreaming = false
            disconnectReason = reason
            // The server's loss is its own cause; reconnecting is what the last watchdog step does anyway.
            ladder.reset()

        case .outputStalled:
            // Only a stream the graph claims to run can stall; a paused one is waiting, which
            // the start deadline covers. A stream the role-based policy corked is waiting too:
            // replacing it would not bring its link back.
            if case .active(_, streaming: true, _) = output, desired.wantsPlaying, policy.roleCork == nil {
                actions += ladder.stalled(now: now)
            }

        case .outputServerUnresponsive:
            if case .active(_, streaming: true, _) = output, desired.wantsPlaying {
                ladder.serverUnresponsive()
            }

        case .outputFlowing:
            ladder.reset()

        case .outputStreaming(let streaming):
            graphStreaming = streaming
            if case .active(let mix, let wasStreaming, _) = output, wasStreaming != streaming {
                output = .active(mix: mix, streaming: streaming, since: now)
                if !streaming {
                    // A linked stream the graph holds paused becomes `serverPaused` after a grace period.
                    if route != nil && announcer.session == .audible {
                        actions.append(.scheduleTick(at: now + configuration.serverPauseGrace))
                    }
                    actions.append(.scheduleTick(at: now + configuration.startTimeout))
                }
            }

        case .outputStopped:
            if output == .stopping { output = .idle }

        case .routeChanged(let newRoute):
            // (A route that appears while the stream waits is judged at the start deadline's tick.)
            news = policy.routeChanged(to: newRoute, wantsPlaying: desired.wantsPlaying, now: now)

        case .graphChanged(let facts):
            policy.graphChanged(facts)

        case .setPreferences(let newPreferences):
            if newPreferences != policy.preferences {
                let oldLevel = policy.preferences.duckLevel
                policy.preferences = newPreferences
                actions.append(.persistPreferences(newPreferences))
                // A new duck level applies at once to a duck under way.
                if ducking && oldLevel != newPreferences.duckLevel { actions.append(.setVolume(effectiveVolume)) }
            }

        case .signer(let availability):
            signer = availability

        case .decodeFailed(let soundscape, let message, let fallback):
            news = Announcement(.decodeError, message)
            if desired.mix.level(of: soundscape) != nil {
                let before = desired
                if let rest = try? desired.mix.removing(soundscape) {
                    // One layer of several: the others play on.
                    desired.mix = rest
                } else if let fallback, fallback != soundscape {
                    desired.mix = Mix(fallback)
                } else {
                    desired.intent = .stopped
                }
                if desired != before { actions.append(.persist(desired)) }
            }

        case .tick:
            let (revive, failure) = ladder.tick(now: now)
            actions += revive
            if let failure { news = failure }
            actions += Self.sleepActions(sleep.tick(now: now))
        }

        actions += reconcileInterruptions(now: now, news: &news)
        actions += reconcileOutput(now: now)
        actions += reconcileTarget()
        let state = currentState(now: now)
        if state == .playing { startFade = .prompt }
        // The situation is only read for a transition; most inputs are not one.
        let transition = state != nil && state != announcer.published
        let situation: EventAnnouncer.Situation? = transition ? self.situation(now: now) : nil
        actions += announcer.publish(state, situation: situation, news: news)
        if desired.wantsSession != announcedSession {
            announcedSession = desired.wantsSession
            actions.append(.signerSession(announcedSession))
        }
        return actions
    }

    // MARK: Reconcile

    /// What the interruption policy decides for this input, carried out.
    private mutating func reconcileInterruptions(now: ContinuousClock.Instant, news: inout Announcement?) -> [Action] {
        let outcome = policy.reconcile(
            wantsPlaying: desired.wantsPlaying, output: output,
            sessionAudible: announcer.session == .audible, now: now)
        var actions: [Action] = []
        if let pause = outcome.pause {
            desired.intent = .paused
            actions.append(.persist(desired))
            news = pause
        }
        if outcome.volumeChanged { actions.append(.setVolume(effectiveVolume)) }
        if let tick = outcome.tick { actions.append(.scheduleTick(at: tick)) }
        if let duckNews = outcome.duckNews { news = news ?? duckNews }
        return actions
    }

    /// Closes the gap between what the output should play (`program`) and what it does.
    private mutating func reconcileOutput(now: ContinuousClock.Instant) -> [Action] {
        switch (program, output) {
        case (let wanted?, .idle), (let wanted?, .stopping):
            // From `.stopping` the stream may still run (the fade-out is simply reversed).
            let streaming = output == .stopping && graphStreaming
            output = .active(mix: wanted, streaming: streaming, since: now)
            return [.startOutput(wanted, effectiveVolume, startFade), .scheduleTick(at: now + configuration.startTimeout)]
        case (let wanted?, .active(let playing, let streaming, let since)) where !playing.sounds(like: wanted):
            output = .active(mix: wanted, streaming: streaming, since: since)
            return [.changeMix(wanted, effectiveVolume)]
        case (nil, .active):
            output = .stopping
            return [.stopOutput]
        default:
            return []
        }
    }

    /// Keeps our stream linked where the policy says, while connected.
    private mutating func reconcileTarget() -> [Action] {
        guard output.isConnected, policy.graph != nil else { return [] }
        let wanted = policy.desiredTarget()
        switch target {
        case .requested(let applied) where applied == wanted:
            return []
        case .requested where wanted == nil:
            // With no usable sink there is nothing to ask for; keep the last request.
            return []
        default:
            target = .requested(wanted)
            return wanted.map { [.setTarget($0)] } ?? []
        }
    }

    /// The sleep timer's actions, as the player's.
    private static func sleepActions(_ actions: [SleepTimer.Action]) -> [Action] {
        actions.map {
            switch $0 {
            case .scheduleTick(let at): .scheduleTick(at: at)
            case .dim(let over): .dim(over: over)
            case .undim: .undim
            }
        }
    }

    private func sleepStatus(now: ContinuousClock.Instant) -> SleepStatus? {
        switch sleep.state {
        case .off: return nil
        case .asleep: return SleepStatus(state: .asleep)
        case .counting(_, let ends), .fading(let ends):
            let left = max(ends - now, .zero)
            let seconds = Int((left + .milliseconds(999)).components.seconds)
            return SleepStatus(state: sleep.isDimming ? .fading : .counting, remaining: seconds)
        }
    }

    private func situation(now: ContinuousClock.Instant) -> EventAnnouncer.Situation {
        let causes = interruptions(now: now)
        let main = mainInterruption(of: causes)
        return EventAnnouncer.Situation(
            stalled: ladder.isWorking, serverUnresponsive: ladder.state == .waitingForServer,
            noUsableSink: policy.noUsableSink, serverUnavailable: !output.isConnected,
            disconnectReason: disconnectReason, interruption: (main, describe(main)))
    }
}
