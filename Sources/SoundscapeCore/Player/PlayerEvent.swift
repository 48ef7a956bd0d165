/// One state change, as delivered to subscribers and to the signer host.
///
/// `seq` grows by one per event for the daemon's lifetime, so a client can
/// prove it saw every event; the rest is a full status snapshot plus why.
public struct PlayerEvent: Sendable, Equatable, Codable {
    public var seq: UInt64
    public var time: Timestamp
    public var type: EventType
    public var reason: EventReason
    /// Human-readable detail (which file failed to decode, why a fallback happened).
    public var message: String?
    /// Machine-readable why, for `interrupted` (an interruption cause) and
    /// `routeChanged` (newDefault, deviceUnavailable, pinnedDeviceReturned).
    public var cause: String?
    public var status: PlayerStatus

    public init(
        seq: UInt64, time: Timestamp, type: EventType, reason: EventReason,
        message: String?, cause: String? = nil, status: PlayerStatus
    ) {
        self.cause = cause
        self.seq = seq
        self.time = time
        self.type = type
        self.reason = reason
        self.message = message
        self.status = status
    }

    private enum CodingKeys: String, CodingKey {
        case seq, time, type, reason, message, cause
    }

    /// Flat on the wire (`state`, `isPlaying`, … beside `seq` and `reason`), as the
    /// phone app's events are; the nesting here is only for Swift's benefit.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(UInt64.self, forKey: .seq)
        time = try container.decode(Timestamp.self, forKey: .time)
        type = try container.decode(EventType.self, forKey: .type)
        reason = try container.decode(EventReason.self, forKey: .reason)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        cause = try container.decodeIfPresent(String.self, forKey: .cause)
        status = try PlayerStatus(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(time, forKey: .time)
        try container.encode(type, forKey: .type)
        try container.encode(reason, forKey: .reason)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(cause, forKey: .cause)
        try status.encode(to: encoder)
    }
}
