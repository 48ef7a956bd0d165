/// What goes into and comes out of `PlayerMachine`.
extension PlayerMachine {
    public struct Configuration: Sendable {
        /// How long an output may take from "start" to streaming before we
        /// stop waiting quietly and report `resumeFailed`.
        public var startTimeout: Duration

        /// How long each watchdog step gets to bring audio back before the next, stronger one.
        public var reviveInterval: Duration

        /// How long the graph may hold our linked, active stream paused before
        /// that counts as the server pausing us (a shorter pause is a re-link).
        public var serverPauseGrace: Duration

        /// Whether the signer-down cue could be opened; without it `cue` means silence.
        public var hasSignerDownCue: Bool

        public init(
            startTimeout: Duration = .seconds(3), reviveInterval: Duration = .seconds(3),
            serverPauseGrace: Duration = .seconds(1), hasSignerDownCue: Bool = true
        ) {
            self.startTimeout = startTimeout
            self.reviveInterval = reviveInterval
            self.serverPauseGrace = serverPauseGrace
            self.hasSignerDownCue = hasSignerDownCue
        }
    }

    /// What the audio output is doing, as far as we know.
    public enum Output: Sendable, Equatable {
        /// The first connection attempt is under way: a start cannot be judged
        /// yet (a play that socket-activated the daemon would otherwise be
        /// answered `recovering` a moment before PipeWire is there).
        case connecting
        /// Not connected to a PipeWire server.
        case unavailable
        /// Connected; the stream exists but is inactive (the sink may suspend).
        case idle
        /// Told to play `mix`; `streaming` once the graph runs us.
        /// `since` is when it last was not streaming, for the start timeout.
        case active(mix: Mix, streaming: Bool, since: ContinuousClock.Instant)
        /// Fading out before going idle.
        case stopping

        /// Connected to a server (whatever the stream does).
        public var isConnected: Bool {
            switch self {
            case .connecting, .unavailable: false
            case .idle, .active, .stopping: true
            }
        }

        /// Playing one soundscape alone.
        public static func active(soundscape: SoundscapeID, streaming: Bool, since: ContinuousClock.Instant) -> Output {
            .active(mix: Mix(soundscape), streaming: streaming, since: since)
        }
    }

    public enum Input: Sendable, Equatable {
        /// Play this mix (one soundscape is a mix of one), replacing what plays.
        case play(Mix)
        /// Change the layers (a level, one added or taken out) without starting or stopping.
        case setMix(Mix)
        /// Set the sleep timer to end this long from now; nil cancels it.
        case sleep(Duration?)
        /// Silence, keeping the session (and the signer host) going; `play` resumes.
        case pause
        /// End the session.
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
        /// The output should play but no audio cycle ran for its grace period,
        /// though the server answers.
        case outputStalled
        /// No audio cycle ran, and the server does not answer either.
        case outputServerUnresponsive
        /// Cycles run again after `outputStalled`.
        case outputFlowing
        /// The graph's sinks, default sink and calls changed.
        case graphChanged(GraphFacts)
        /// The user changed a preference (or they were loaded at start-up).
        case setPreferences(Preferences)
        /// Whether signing is up, as `SignerMachine` judges it (down: failed, hung,
        /// unhealthy, or not up within its start grace, and why).
        case signer(SignerAvailability)
        /// Time passed; re-evaluate deadlines.
        case tick

        /// Play one soundscape alone.
        public static func play(_ soundscape: SoundscapeID) -> Input { .play(Mix(soundscape)) }
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

    /// What the caller must do. Each action carries everything needed to carry
    /// it out, so the caller never reads the machine's state to perform one.
    public enum Action: Sendable, Equatable {
        /// Start from silence (or turn a fade-out back), fading in as given.
        case startOutput(Mix, Volume, FadeIn)
        /// Move to another mix at this volume (the ducked one during a call in duck mode):
        /// layers that stay change level, the others cross-fade in and out.
        case changeMix(Mix, Volume)
        /// The sleep timer's fade: dim the sound to silence over this long.
        case dim(over: Duration)
        /// The sleep timer was cancelled or woken: the sound back to full.
        case undim
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
        /// Whether the user wants the keep-alive session now (`DesiredState.wantsSession`),
        /// sent when it changes: the signer's machine takes it as `.session`.
        case signerSession(Bool)

        /// Start one soundscape alone from silence.
        public static func startOutput(_ soundscape: SoundscapeID, _ volume: Volume, _ fadeIn: FadeIn) -> Action {
            .startOutput(Mix(soundscape), volume, fadeIn)
        }

        /// Cross-fade to one soundscape alone.
        public static func switchSoundscape(_ soundscape: SoundscapeID, _ volume: Volume) -> Action {
            .changeMix(Mix(soundscape), volume)
        }
    }

    /// An input's own news, published unless a state transition says more (see `EventAnnouncer`).
    struct Announcement: Sendable, Equatable {
        var reason: EventReason
        var message: String?
        var cause: String?

        init(_ reason: EventReason, _ message: String? = nil, cause: String? = nil) {
            self.reason = reason
            self.message = message
            self.cause = cause
        }
    }
}
