/// How the player behaves around calls and devices; persisted, and settable
/// with `soundscapectl set NAME VALUE`.
public struct Preferences: Sendable, Equatable, Codable {
    public enum InterruptionMode: String, Sendable, Codable, CaseIterable {
        /// Pause for the call and resume after it.
        case pause
        /// Keep playing, lowered to `duckLevel`.
        case duck
        /// Keep playing as if nothing happened (a call route still pauses: we never play into one).
        case ignore
    }

    /// What plays while the keep-alive session's signer is down (see docs/signer.md).
    public enum SignerDownSound: String, Sendable, Codable, CaseIterable {
        /// The soundscape fades out and a short, gentle cue repeats instead.
        case cue
        /// The soundscape fades out and nothing plays.
        case silence
        /// The soundscape plays on as if all were well.
        case keep
    }

    public var interruptionMode: InterruptionMode
    /// While ducked, the volume is this percentage of the user's (on the same cubic curve).
    public var duckLevel: Int
    /// Resume by itself when the interruption ends; off means stay stopped.
    public var autoResume: Bool
    /// Play to this sink (`node.name`) whenever it exists, instead of following the default.
    public var pinnedSink: String?
    /// Hold a logind sleep inhibitor while a keep-alive session runs (see `KeepAwake`).
    public var keepAwake: Bool
    /// Let the desktop companion raise notifications when the keep-alive breaks.
    public var notifications: Bool
    /// What the sink carries while the signer is down.
    public var signerDownSound: SignerDownSound

    public static let `default` = Preferences(interruptionMode: .pause, duckLevel: 30, autoResume: true, pinnedSink: nil)

    public init(
        interruptionMode: InterruptionMode, duckLevel: Int, autoResume: Bool, pinnedSink: String?,
        keepAwake: Bool = false, notifications: Bool = true, signerDownSound: SignerDownSound = .cue
    ) {
        self.interruptionMode = interruptionMode
        self.duckLevel = duckLevel
        self.autoResume = autoResume
        self.pinnedSink = pinnedSink
        self.keepAwake = keepAwake
        self.notifications = notifications
        self.signerDownSound = signerDownSound
    }

    private enum CodingKeys: String, CodingKey {
        case interruptionMode, duckLevel, autoResume, pinnedSink, keepAwake, notifications, signerDownSound
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(interruptionMode, forKey: .interruptionMode)
        try container.encode(duckLevel, forKey: .duckLevel)
        try container.encode(autoResume, forKey: .autoResume)
        try container.encode(pinnedSink, forKey: .pinnedSink)
        try container.encode(keepAwake, forKey: .keepAwake)
        try container.encode(notifications, forKey: .notifications)
        try container.encode(signerDownSound, forKey: .signerDownSound)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        interruptionMode = try container.decode(InterruptionMode.self, forKey: .interruptionMode)
        duckLevel = try container.decode(Int.self, forKey: .duckLevel)
        autoResume = try container.decode(Bool.self, forKey: .autoResume)
        pinnedSink = try container.decodeIfPresent(String.self, forKey: .pinnedSink)
        keepAwake = try container.decodeIfPresent(Bool.self, forKey: .keepAwake) ?? false
        notifications = try container.decodeIfPresent(Bool.self, forKey: .notifications) ?? true
        signerDownSound = try container.decodeIfPresent(SignerDownSound.self, forKey: .signerDownSound) ?? .cue
    }

    /// The names `soundscapectl set` accepts, and how their values are written.
    public static let names = [
        "interruption-mode", "duck-level", "auto-resume", "pinned-sink", "keep-awake", "notifications",
        "signer-down-sound",
    ]

    public struct ValueError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Applies `soundscapectl set NAME VALUE`.
    public mutating func set(_ name: String, to value: String) throws(ValueError) {
        switch name {
        case "interruption-mode":
            guard let mode = InterruptionMode(rawValue: value.lowercased()) else {
                throw ValueError(description: "interruption-mode must be one of \(InterruptionMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            interruptionMode = mode
        case "duck-level":
            guard let level = Int(value.hasSuffix("%") ? String(value.dropLast()) : value), (0...100).contains(level) else {
                throw ValueError(description: "duck-level must be a percentage from 0 to 100")
            }
            duckLevel = level
        case "auto-resume":
            autoResume = try Self.onOff(name, value)
        case "keep-awake":
            keepAwake = try Self.onOff(name, value)
        case "notifications":
            notifications = try Self.onOff(name, value)
        case "signer-down-sound":
            guard let sound = SignerDownSound(rawValue: value.lowercased()) else {
                throw ValueError(description: "signer-down-sound must be one of \(SignerDownSound.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            signerDownSound = sound
        case "pinned-sink":
            if value.isEmpty || value == "none" || value == "default" {
                pinnedSink = nil
            } else {
                guard value.utf8.count <= 256, !value.contains(where: \.isNewline) else {
                    throw ValueError(description: "pinned-sink must be a node.name, or none")
                }
                pinnedSink = value
            }
        default:
            throw ValueError(description: "unknown preference '\(name)' (known: \(Self.names.joined(separator: ", ")))")
        }
    }

    /// The value of the preference `name` as `set(name, to:)` takes it back (`on`/`off`, a
    /// percentage, `none` for no pinned sink), or nil for a name that is not one of ``names``.
    ///
    /// With ``names`` and `set`, this is all the state database knows of preferences: it keeps
    /// each as its name and this value and restores it through `set`, so a new preference is
    /// saved once it is here, and a value `set` refuses (a row from a newer build, or edited by
    /// hand) leaves that preference at its default.
    public func value(named name: String) -> String? {
        switch name {
        case "interruption-mode": interruptionMode.rawValue
        case "duck-level": String(duckLevel)
        case "auto-resume": autoResume ? "on" : "off"
        case "pinned-sink": pinnedSink ?? "none"
        case "keep-awake": keepAwake ? "on" : "off"
        case "notifications": notifications ? "on" : "off"
        case "signer-down-sound": signerDownSound.rawValue
        default: nil
        }
    }

    /// The `soundscapectl set` names whose values differ from `old`'s.
    public func changedNames(since old: Preferences) -> [String] {
        Self.names.filter { value(named: $0) != old.value(named: $0) }
    }

    private static func onOff(_ name: String, _ value: String) throws(ValueError) -> Bool {
        switch value.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw ValueError(description: "\(name) must be on or off")
        }
    }
}

/// Why the player is interrupted.
public enum InterruptionCause: String, Sendable, Codable, CaseIterable, Comparable {
    /// A call or other communication stream is playing or recording.
    case communicationStream
    /// The default sink is a call route (a Bluetooth headset in its call profile).
    case callRoute
    /// The server paused our stream while we want to play.
    case serverPaused
    /// The signer is down: the soundscape is held off (`signer-down-sound` cue or silence).
    case signerDown
    /// The volume is off: the stream is inactive, so the sink can suspend; the session goes on.
    case muted
    /// WirePlumber's role-based policy (0.5.4+, opt-in) corked our link to a
    /// role sink for a stream that outranks ours (an alert, a call), or because
    /// `suspend.playback` is set: our stream stays as it is, unlinked, until
    /// the policy links it again.
    case roleCorked
    /// The sleep timer ran out: silent, as at volume off, until `play` wakes the sound.
    case asleep

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Why the route changed.
public enum RouteChangeCause: String, Sendable, Codable, CaseIterable {
    case newDefault
    case deviceUnavailable
    case pinnedDeviceReturned
}
