/// What the PipeWire graph looks like, as far as the player cares: which
/// sinks exist, which one is the default, and whether anything that outranks
/// a soundscape (a call) is active. Reported whole on every change, so the
/// player re-evaluates from facts, never from a single "it ended" signal.
/// `GraphFacts(nodes:links:…)` (GraphFacts+Nodes.swift) makes them from the
/// graph's nodes and links.
public struct GraphFacts: Sendable, Equatable {
    public struct Sink: Sendable, Equatable {
        public var name: String
        /// A sink whose sound ends up in a call: a Bluetooth headset in its call
        /// profile (HSP/HFP), judged by its device rather than its node, or a
        /// sink meant for communication. Never a place for a soundscape.
        public var isCallRoute: Bool
        /// The sink's place in WirePlumber 0.5's role-based policy, if it is one
        /// of its targets (a `loopback.sink.role.*` sink).
        public var rolePolicy: RolePolicy?
        /// How many streams (never ours) are linked into this sink; counted for
        /// role-policy sinks only, where a linked stream is the policy's doing.
        public var linkedStreams: Int

        public init(name: String, isCallRoute: Bool, rolePolicy: RolePolicy? = nil, linkedStreams: Int = 0) {
            self.name = name
            self.isCallRoute = isCallRoute
            self.rolePolicy = rolePolicy
            self.linkedStreams = linkedStreams
        }
    }

    public var sinks: [Sink]
    /// `node.name` of the default sink (the `default` metadata's `default.audio.sink`).
    public var defaultSink: String?
    /// Active communication streams (calls), described for people: "Linphone (Communication)".
    public var communicationStreams: [String]
    /// The `default` metadata's `suspend.playback` is set: WirePlumber 0.5's
    /// role-based policy then holds every link into its sinks inactive.
    public var playbackSuspended: Bool

    public init(
        sinks: [Sink] = [], defaultSink: String? = nil, communicationStreams: [String] = [],
        playbackSuspended: Bool = false
    ) {
        self.sinks = sinks
        self.defaultSink = defaultSink
        self.communicationStreams = communicationStreams
        self.playbackSuspended = playbackSuspended
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
    /// `media.role` values of streams that interrupt us, and the intended roles
    /// (`device.intended-roles`) of sinks that are call routes.
    public var roles: Set<String>
    /// Known VoIP applications, matched case-insensitively against
    /// `application.process.binary` and `application.name`.
    public var applications: Set<String>

    public static let defaultRoles = Settings.interruptionRoles.defaultValue
    public static let defaultApplications = Settings.voipApplications.defaultValue

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

    /// Whether a sink is a call route by its own properties: in a headset
    /// profile (`isInHeadsetProfile`), or meant for a call role
    /// (`device.intended-roles`, space-separated as PipeWire's Bluetooth nodes
    /// write it, or a JSON array as WirePlumber 0.5's role loopbacks do).
    /// A sink can also be a call route through its device: see `GraphFacts(nodes:links:…)`.
    public func isCallRoute(properties: [String: String]) -> Bool {
        if Self.isInHeadsetProfile(properties: properties) { return true }
        guard let intended = properties["device.intended-roles"] else { return false }
        return SPAJSON.words(intended).contains { roles.contains($0) }
    }

    /// A Bluetooth node in the headset (HSP/HFP) profile, the one calls use:
    /// PipeWire names it `headset-head-unit` or `headset-audio-gateway`
    /// (`spa_bt_profile_name`), older stacks `hfp_*` or `hsp_*`; its sink is made
    /// by the SCO factory.
    public static func isInHeadsetProfile(properties: [String: String]) -> Bool {
        if let profile = properties["api.bluez5.profile"],
            profile.hasPrefix("headset-") || profile.hasPrefix("hsp") || profile.hasPrefix("hfp")
        {
            return true
        }
        return properties["factory.name"] == "api.bluez5.sco.sink"
    }
}

/// The few shapes of SPA JSON that graph properties and metadata take: not a
/// parser, a reader of words.
public enum SPAJSON {
    /// The words of a value that is a bare word, a space-separated list, an
    /// array (`[ "Communication", "Phone" ]`, or SPA JSON's relaxed
    /// `[ Communication Phone ]`) or a flat object: quotes, commas, brackets,
    /// braces, `:` and `=` outside quotes dropped.
    public static func words(_ text: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quoted = false
        var escaped = false
        func flush(quoted: Bool = false) {
            if quoted || !word.isEmpty { words.append(word) }
            word = ""
        }
        for character in text {
            if quoted {
                if escaped {
                    word.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                    flush(quoted: true)
                } else {
                    word.append(character)
                }
            } else if character == "\"" {
                flush()
                quoted = true
            } else if "[]{},:=".contains(character) || character.isWhitespace {
                flush()
            } else {
                word.append(character)
            }
        }
        flush()
        return words
    }

    /// The value of `key` in a flat object such as the `default` metadata's
    /// `{"name": "alsa_output.pci-0000_00_1f.3.analog-stereo"}`.
    public static func string(forKey key: String, in text: String) -> String? {
        let words = words(text)
        guard let index = words.firstIndex(of: key), index + 1 < words.count else { return nil }
        return words[index + 1]
    }
}
