/// What `GetStatus` returns and what every event repeats, so a client never
/// has to combine several messages to know where things stand.
public struct PlayerStatus: Sendable, Equatable, Codable {
    public var state: PlayerState
    /// True only while audio is really flowing to a sink.
    public var isPlaying: Bool
    /// The soundscape that plays, or would play on `play`.
    public var soundscape: SoundscapeID
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
        self.volume = volume
        self.route = route
        self.wantsPlaying = wantsPlaying
        self.signer = signer
    }

    private enum CodingKeys: String, CodingKey {
        case state, isPlaying, soundscape, volume, route, noSink, wantsPlaying, signer, interruptions, ducked, cuePlaying,
            keepAwake, version
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(PlayerState.self, forKey: .state)
        isPlaying = try container.decode(Bool.self, forKey: .isPlaying)
        soundscape = try container.decode(SoundscapeID.self, forKey: .soundscape)
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
        try container.encode(volume, forKey: .volume)
        try container.encode(route, forKey: .route)
        try container.encode(noSink, forKey: .noSink)
        try container.encode(wantsPlaying, forKey: .wantsPlaying)
        try container.encode(signer, forKey: .signer)
        try container.encode(interruptions, forKey: .interruptions)
        try container.encode(ducked, forKey: .ducked)
        try container.encode(cuePlaying, forKey: .cuePlaying)
        try container.encode(keepAwake, forKey: .keepAwake)
        try container.encode(version, forKey: .version)
    }
}
