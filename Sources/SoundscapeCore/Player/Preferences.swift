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

    public var interruptionMode: InterruptionMode
    /// While ducked, the volume is this percentage of the user's (on the same cubic curve).
    public var duckLevel: Int
    /// Resume by itself when the interruption ends; off means stay stopped.
    public var autoResume: Bool
    /// Play to this sink (`node.name`) whenever it exists, instead of following the default.
    public var pinnedSink: String?

    public static let `default` = Preferences(interruptionMode: .pause, duckLevel: 30, autoResume: true, pinnedSink: nil)

    public init(interruptionMode: InterruptionMode, duckLevel: Int, autoResume: Bool, pinnedSink: String?) {
        self.interruptionMode = interruptionMode
        self.duckLevel = duckLevel
        self.autoResume = autoResume
        self.pinnedSink = pinnedSink
    }

    private enum CodingKeys: String, CodingKey { case interruptionMode, duckLevel, autoResume, pinnedSink }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(interruptionMode, forKey: .interruptionMode)
        try container.encode(duckLevel, forKey: .duckLevel)
        try container.encode(autoResume, forKey: .autoResume)
        try container.encode(pinnedSink, forKey: .pinnedSink)
    }

    /// The names `soundscapectl set` accepts, and how their values are written.
    public static let names = ["interruption-mode", "duck-level", "auto-resume", "pinned-sink"]

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
            switch value.lowercased() {
            case "on", "true", "yes", "1": autoResume = true
            case "off", "false", "no", "0": autoResume = false
            default: throw ValueError(description: "auto-resume must be on or off")
            }
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
}

/// Why the player is interrupted.
public enum InterruptionCause: String, Sendable, Codable, CaseIterable, Comparable {
    /// A call or other communication stream is playing or recording.
    case communicationStream
    /// The default sink is a call route (a Bluetooth headset in its call profile).
    case callRoute
    /// The server paused our stream while we want to play.
    case serverPaused

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
