/// What the PipeWire graph looks like, as far as the player cares: which
/// sinks exist, which one is the default, and whether anything that outranks
/// a soundscape (a call) is active. Reported whole on every change, so the
/// player re-evaluates from facts, never from a single "it ended" signal.
public struct GraphFacts: Sendable, Equatable {
    public struct Sink: Sendable, Equatable {
        public var name: String
        /// A Bluetooth headset in its call profile (HSP/HFP), or a sink meant for
        /// communication: never a place for a soundscape.
        public var isCallRoute: Bool

        public init(name: String, isCallRoute: Bool) {
            self.name = name
            self.isCallRoute = isCallRoute
        }
    }

    public var sinks: [Sink]
    /// `node.name` of the default sink (the `default` metadata's `default.audio.sink`).
    public var defaultSink: String?
    /// Active communication streams (calls), described for people: "Linphone (Communication)".
    public var communicationStreams: [String]

    public init(sinks: [Sink] = [], defaultSink: String? = nil, communicationStreams: [String] = []) {
        self.sinks = sinks
        self.defaultSink = defaultSink
        self.communicationStreams = communicationStreams
    }

    public func sink(named name: String?) -> Sink? {
        name.flatMap { name in sinks.first { $0.name == name } }
    }

    /// True when the default sink is a call route.
    public var defaultIsCallRoute: Bool { sink(named: defaultSink)?.isCallRoute ?? false }
}

/// Which graph properties make a node a call or a call route. Configurable,
/// because desktops differ in what their VoIP apps set.
public struct CallDetection: Sendable, Equatable {
    /// `media.role` values of streams that interrupt us.
    public var roles: Set<String>
    /// Known VoIP applications, matched case-insensitively against
    /// `application.process.binary` and `application.name`.
    public var applications: Set<String>

    public static let defaultRoles: Set<String> = ["Communication", "Phone"]
    public static let defaultApplications: Set<String> = [
        "baresip", "discord", "element", "jami", "linphone", "mumble", "signal-desktop", "skype",
        "slack", "teams", "telegram-desktop", "zoom", "zoiper", "microsip", "jitsi",
    ]

    public init(roles: Set<String> = defaultRoles, applications: Set<String> = defaultApplications) {
        self.roles = roles
        self.applications = applications
    }

    /// Whether a stream node with these properties is a call.
    public func isCall(properties: [String: String]) -> Bool {
        guard let mediaClass = properties["media.class"], mediaClass.hasPrefix("Stream/") else { return false }
        if let role = properties["media.role"], roles.contains(role) { return true }
        let names = [properties["application.process.binary"], properties["application.name"]]
            .compactMap { $0?.lowercased() }
        return names.contains { name in applications.contains { name == $0.lowercased() } }
    }

    /// Whether a sink with these properties is a call route (Bluetooth call
    /// profile, SCO sink, or meant for communication).
    public static func isCallRoute(properties: [String: String]) -> Bool {
        if let profile = properties["api.bluez5.profile"], profile == "headset-head-unit" || profile == "headset-audio-gateway"
            || profile.hasPrefix("hsp") || profile.hasPrefix("hfp") {
            return true
        }
        if properties["factory.name"] == "api.bluez5.sco.sink" { return true }
        if let roles = properties["device.intended-roles"], roles.split(separator: " ").contains("Communication") {
            return true
        }
        return false
    }
}
