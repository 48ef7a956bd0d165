/// What `GetStatus` returns and what every event repeats, so a client never
/// has to combine several messages to know where things stand.
public struct PlayerStatus: Sendable, Equatable, Codable {
    public var state: PlayerState
    /// True only while audio is really flowing to a sink.
    public var isPlaying: Bool
    /// The soundscape that plays, or would play on `play` (a mix's first layer).
    public var soundscape: SoundscapeID
    /// The layers that play, or would play on `play`: one at 100 for a single soundscape.
    public var layers: [Mix.Layer]
    /// The saved mix that plays, unchanged since it was played or saved; nil for any other.
    public var mix: String?
    /// The sleep timer, while one is set (and once it has run out, until woken).
    public var sleep: SleepStatus?
    public var volume: Volume
    /// `node.name` of the sink we play to; null while we are not linked.
    public var route: String?
    /// The graph has no sink we may play to (a server, a desktop with no sound
    /// device): the session and its signer go on, and play once a sink appears.
    public var noSink = false
    /// What the user asked for, which survives interruptions and restarts.
    public var wantsPlaying: Bool
    /// The signer host, or null when none is configured.
    public var signer: SignerStatus?
    /// What interrupts playback now (`InterruptionCause`: `communicationStream`,
    /// `callRoute`, `serverPaused`, `roleCorked`).
    public var interruptions: [String] = []
    /// Whether the volume is lowered for a call (interruption mode `duck`).
    public var ducked = false
    /// The sink carries the signer-down cue (interrupted by `signerDown`, with the
    /// `signer-down-sound` preference `cue`): audio flows, but not the soundscape.
    public var cuePlaying = false
    /// The sleep inhibitor, present while the `keep-awake` preference is on.
    public var keepAwake: KeepAwakeStatus?
    /// The version of the daemon that sends this status (`SoundscapedVersion`),
    /// so a client sees which build answers, say after a package upgrade; nil
    /// when decoded from an older daemon, which did not send it.
    public var version: String? = SoundscapedVersion.string

    public init(
        state: PlayerState, isPlaying: Bool, soundscape: SoundscapeID, volume: Volume,
        route: String?, wantsPlaying: Bool, signer: SignerStatus? = nil
    ) {
        self.state = state
        self.isPlaying = isPlaying
        self.soundscape = soundscape
        layers = [Mix.Layer(soundscape)]
        self.volume = volume
        self.route = route
        self.wantsPlaying = wantsPlaying
        self.signer = signer
    }

    private enum CodingKeys: String, CodingKey {
        case state, isPlaying, soundscape, layers, mix, volume, route, noSink, wantsPlaying, signer, interruptions, ducked,
            cuePlaying, keepAwake, sleep, version
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(PlayerState.self, forKey: .state)
        isPlaying = try container.decode(Bool.self, forKey: .isPlaying)
        soundscape = try container.decode(SoundscapeID.self, forKey: .soundscape)
        // Older daemons send no layers: their soundscape is the one layer.
        layers = try container.decodeIfPresent([Mix.Layer].self, forKey: .layers) ?? [Mix.Layer(soundscape)]
        mix = try container.decodeIfPresent(String.self, forKey: .mix)
        sleep = try container.decodeIfPresent(SleepStatus.self, forKey: .sleep)
        volume = try container.decode(Volume.self, forKey: .volume)
        route = try container.decodeIfPresent(String.self, forKey: .route)
        noSink = try container.decodeIfPresent(Bool.self, forKey: .noSink) ?? false
        wantsPlaying = try container.decode(Bool.self, forKey: .wantsPlaying)
        signer = try container.decodeIfPresent(SignerStatus.self, forKey: .signer)
        interruptions = try container.decodeIfPresent([String].self, forKey: .interruptions) ?? []
        ducked = try container.decodeIfPresent(Bool.self, forKey: .ducked) ?? false
        cuePlaying = try container.decodeIfPresent(Bool.self, forKey: .cuePlaying) ?? false
        keepAwake = try container.decodeIfPresent(KeepAwakeStatus.self, forKey: .keepAwake)
        version = try container.decodeIfPresent(String.self, forKey: .version)
    }

    /// Writes `route` as an explicit null: clients test for it, not for a missing key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(isPlaying, forKey: .isPlaying)
        try container.encode(soundscape, forKey: .soundscape)
        try container.encode(layers, forKey: .layers)
        try container.encode(mix, forKey: .mix)
        try container.encode(volume, forKey: .volume)
        try container.encode(route, forKey: .route)
        try container.encode(noSink, forKey: .noSink)
        try container.encode(wantsPlaying, forKey: .wantsPlaying)
        try container.encode(signer, forKey: .signer)
        try container.encode(interruptions, forKey: .interruptions)
        try container.encode(ducked, forKey: .ducked)
        try container.encode(cuePlaying, forKey: .cuePlaying)
        try container.encode(keepAwake, forKey: .keepAwake)
        try container.encode(sleep, forKey: .sleep)
        try container.encode(version, forKey: .version)
    }
}

/// The sleep timer, as a status shows it.
public struct SleepStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        /// Counting down; the sound plays on.
        case counting
        /// The sound fades away.
        case fading
        /// The time is up: silent until `play` wakes the sound.
        case asleep
    }

    public var state: State
    /// When the time is up (RFC 3339, UTC); nil once asleep.
    public var ends: String?
    /// Seconds until then, rounded up; nil once asleep.
    public var remaining: Int?

    public init(state: State, ends: String? = nil, remaining: Int? = nil) {
        self.state = state
        self.ends = ends
        self.remaining = remaining
    }
}
