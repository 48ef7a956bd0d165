import SoundscapeCore

/// What the MPRIS object shows, computed from the daemon's status alone, so
/// it is tested without a bus and every property is re-derived on each event
/// (nothing is patched incrementally, nothing can drift).
///
/// Mapping (see docs/desktop.md):
/// - `PlaybackStatus`: Playing while the user wants sound (also while the
///   daemon is recovering it: the notification covers a breakage); Paused when
///   paused or interrupted (a call); Stopped when stopped or the daemon is away.
/// - `Metadata`: the soundscape's id as `mpris:trackid`, its manifest title as
///   `xesam:title` (for a saved mix, its name; for other layers, their titles
///   joined: "Rain + Ocean waves"); the sleep timer, while one is set, as `xesam:comment`; `xesam:artist` is the line the Now Playing panel shows under
///   the title, so it carries the signer's state: its own status line while it runs
///   ("igloo-signer: 3/3 relays"), else its state ("igloo-signer running", "…
///   unhealthy", "… degraded: 2/3 peers online", "… failed (…)"); the icon as `mpris:artUrl`.
/// - `Volume`: the daemon's percentage as 0.0–1.0.
public struct MPRISModel: Sendable, Equatable {
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"
    public static let rootInterface = "org.mpris.MediaPlayer2"
    public static let objectPath = "/org/mpris/MediaPlayer2"
    public static let busName = "org.mpris.MediaPlayer2.soundscaped"

    /// The daemon's status; nil while it cannot be reached, or answers only that it is not configured.
    public var status: PlayerStatus?
    /// What the daemon answered instead of a status: it runs, but cannot use its
    /// configuration (the file or the flag, and why); nil while it answers, or is away.
    public var notConfigured: String?
    /// Soundscape titles by id, from `ListSoundscapes`.
    public var titles: [String: String]
    /// `file://` URL of the icon, if it is installed.
    public var artURL: String?

    public init(
        status: PlayerStatus? = nil, notConfigured: String? = nil, titles: [String: String] = [:], artURL: String? = nil
    ) {
        self.status = status
        self.notConfigured = notConfigured
        self.titles = titles
        self.artURL = artURL
    }

    public var playbackStatus: String {
        guard let status else { return "Stopped" }
        switch status.state {
        case .playing, .recovering, .resuming: return "Playing"
        case .paused, .interrupted: return "Paused"
        case .stopped: return "Stopped"
        }
    }

    /// The line under the title: whether the keep-alive's signer runs, in its own words when it has some.
    public var signerLine: String {
        guard let status else {
            return notConfigured.map { "soundscaped is not configured: \($0)" } ?? "soundscaped is not running"
        }
        guard let signer = status.signer else { return "No signer configured" }
        let name = signer.name ?? "Signer"
        if signer.health == .unhealthy, signer.state != .failed { return "\(name) unhealthy" }
        // It signs, but its check warns (a monitoring plugin's WARNING): said, with its words.
        if signer.health == .degraded, signer.state == .running { return "\(name) degraded" + (signer.status.map { ": \($0)" } ?? "") }
        switch signer.state {
        case .running: return signer.status.map { "\(name): \($0)" } ?? "\(name) running"
        case .starting, .restarting: return "\(name) starting"
        case .stopping, .stopped: return "\(name) stopped"
        case .failed: return "\(name) failed" + (signer.lastExit.map { " (\($0))" } ?? "")
        }
    }

    public var metadata: [String: BusValue] {
        var metadata: [String: BusValue] = [
            "xesam:artist": .strings([signerLine]),
            "xesam:album": .string("Keep-alive soundscape"),
        ]
        if let status {
            metadata["mpris:trackid"] = .objectPath(Self.trackID(for: Self.track(of: status)))
            metadata["xesam:title"] = .string(title(of: status))
            if let sleep = status.sleep { metadata["xesam:comment"] = .strings([Self.sleepLine(sleep)]) }
        } else {
            metadata["mpris:trackid"] = .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack")
            metadata["xesam:title"] = .string("Soundscape")
        }
        if let artURL { metadata["mpris:artUrl"] = .string(artURL) }
        return metadata
    }

    /// What the title shows: the saved mix's name, else each layer's title, joined.
    public func title(of status: PlayerStatus) -> String {
        if let mix = status.mix { return mix }
        let ids = status.layers.isEmpty ? [status.soundscape] : status.layers.map(\.soundscape)
        return ids.map { titles[$0.rawValue] ?? $0.rawValue }.joined(separator: " + ")
    }

    /// The sleep timer, for the line under the album (the remaining time would go stale between events).
    static func sleepLine(_ sleep: SleepStatus) -> String {
        switch sleep.state {
        case .counting: "Sleep timer: the sound fades away" + (sleep.ends.map { " at \($0)" } ?? "")
        case .fading: "Sleep timer: fading away"
        case .asleep: "Asleep: silent until Play; the keep-alive goes on"
        }
    }

    public var volume: Double {
        Double(status?.volume.percent ?? 0) / 100
    }

    /// Every property of the Player interface.
    public var playerProperties: [String: BusValue] {
        [
            "PlaybackStatus": .string(playbackStatus),
            "Metadata": .dictionary(metadata),
            "Volume": .double(volume),
            "Position": .int64(0),
            "Rate": .double(1),
            "MinimumRate": .double(1),
            "MaximumRate": .double(1),
            "CanGoNext": .bool(true),
            "CanGoPrevious": .bool(true),
            "CanPlay": .bool(true),
            "CanPause": .bool(true),
            "CanSeek": .bool(false),
            "CanControl": .bool(true),
        ]
    }

    /// Every property of the root interface.
    public static let rootProperties: [String: BusValue] = [
        "Identity": .string("Soundscape"),
        "DesktopEntry": .string("soundscaped"),
        "CanQuit": .bool(false),
        "CanRaise": .bool(false),
        "HasTrackList": .bool(false),
        "SupportedUriSchemes": .strings([]),
        "SupportedMimeTypes": .strings([]),
    ]

    /// The Player properties whose value differs from `old`'s (for PropertiesChanged).
    public func changedPlayerProperties(since old: MPRISModel) -> [String: BusValue] {
        let before = old.playerProperties
        return playerProperties.filter { before[$0.key] != $0.value }
    }

    /// What Next and Previous step through: the soundscapes, then the saved mixes (as Blanket's presets).
    public enum Track: Sendable, Hashable {
        case soundscape(String)
        case mix(String)

        /// `Play`'s parameters for it.
        public var playParameters: [String: String] {
            switch self {
            case .soundscape(let id): ["soundscape": id]
            case .mix(let name): ["mix": name]
            }
        }
    }

    /// The soundscapes in list order, then the saved mixes.
    public static func tracks(soundscapes: [String], mixes: [String]) -> [Track] {
        soundscapes.map(Track.soundscape) + mixes.map(Track.mix)
    }

    /// Where the status stands among the tracks: its saved mix, else its (first) soundscape.
    public static func track(of status: PlayerStatus) -> Track {
        status.mix.map(Track.mix) ?? .soundscape(status.soundscape.rawValue)
    }

    /// A D-Bus object path per track: the soundscape's, or under `/io/soundscaped/mix/` a mix's.
    public static func trackID(for track: Track) -> String {
        switch track {
        case .soundscape(let id): trackID(for: id)
        case .mix(let name): "/io/soundscaped/mix/" + pathElement(name)
        }
    }

    /// A D-Bus object path per soundscape: ids may hold characters a path may
    /// not (only [A-Za-z0-9_] are allowed), so every other byte becomes _XX.
    public static func trackID(for id: String) -> String {
        "/io/soundscaped/soundscape/" + pathElement(id)
    }

    private static func pathElement(_ id: String) -> String {
        var element = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                element.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                element += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return element.isEmpty ? "_" : element
    }

    /// The track (soundscape or mix) `step` places away from the current one in list order, wrapping.
    public static func neighbour<T: Equatable>(of current: T, in order: [T], step: Int) -> T? {
        guard !order.isEmpty else { return nil }
        guard let index = order.firstIndex(of: current) else { return order[step > 0 ? 0 : order.count - 1] }
        let count = order.count
        return order[((index + step) % count + count) % count]
    }
}
