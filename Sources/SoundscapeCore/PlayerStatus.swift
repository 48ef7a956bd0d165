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
    /// What the user asked for, which survives interruptions and restarts.
    public var wantsPlaying: Bool
    /// The signer host, or null when none is configured.
    public var signer: SignerStatus?

    public init(state: PlayerState, isPlaying: Bool, soundscape: SoundscapeID, volume: Volume,
                route: String?, wantsPlaying: Bool, signer: SignerStatus? = nil) {
        self.state = state
        self.isPlaying = isPlaying
        self.soundscape = soundscape
        self.volume = volume
        self.route = route
        self.wantsPlaying = wantsPlaying
        self.signer = signer
    }

    private enum CodingKeys: String, CodingKey {
        case state, isPlaying, soundscape, volume, route, wantsPlaying, signer
    }

    /// Writes `route` as an explicit null: clients test for it, not for a missing key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(isPlaying, forKey: .isPlaying)
        try container.encode(soundscape, forKey: .soundscape)
        try container.encode(volume, forKey: .volume)
        try container.encode(route, forKey: .route)
        try container.encode(wantsPlaying, forKey: .wantsPlaying)
        try container.encode(signer, forKey: .signer)
    }
}
