import SoundscapeCore

/// What the player needs of an audio output: `PipeWireOutput` is the real one,
/// and the player's unit tests drive a fake.
///
/// Every method returns at once and may be called from any thread: the work
/// happens on the output's own thread, in the order called, and what becomes
/// true is reported back as `AudioOutputEvent`s. So the caller (the player, on
/// the event loop that also answers the control socket) never waits for a
/// decode, a disk or the PipeWire server.
public protocol AudioOutput: AnyObject, Sendable {
    /// Starts connecting (and keeps reconnecting) to the server.
    func start()
    /// Disconnects for good (daemon shutdown). Returns once done.
    func shutdown()
    /// Plays the layers at `volume`: fades in from silence as `fadeIn` says (a
    /// fade already under way keeps its pace); while audible, layers that stay
    /// change level, new ones fade in and the rest fade out (a crossfade).
    func play(_ layers: [LayerData], volume: Volume, fadeIn: FadeIn)
    func setVolume(_ volume: Volume)
    /// The sleep timer's fade: dims the sound to silence evenly over `duration`.
    func dim(over duration: Duration)
    /// Back to full from a dimming, with a short ramp.
    func undim()
    /// Fades out, then makes the stream inactive; reports `.stopped`.
    func stop()
    /// Links the stream to this sink (`node.name`); nil leaves it to the session manager.
    func setTarget(_ sink: String?)
    /// The watchdog's steps, gentlest first.
    func reactivate()
    func recreateStream()
    func reconnectNow(reason: String)
}

extension AudioOutput {
    /// Plays one soundscape alone.
    public func play(_ data: SoundscapeData, volume: Volume, fadeIn: FadeIn) {
        play([LayerData(data)], volume: volume, fadeIn: fadeIn)
    }
}

/// One layer of a mix, opened: its soundscape and its level (0–100).
public struct LayerData: Sendable {
    public let data: SoundscapeData
    public let level: Int

    public init(_ data: SoundscapeData, level: Int = Mix.fullLevel) {
        self.data = data
        self.level = level
    }

    /// The level as a 0…1 position on the volume curve.
    var position: Float { Float(level) / 100 }
}

/// Facts the PipeWire output reports to the player. They say what happened,
/// never what to do about it: the player's state machine decides that.
public enum AudioOutputEvent: Sendable, Equatable {
    /// Connected to a server; the stream exists and is inactive.
    case connected
    /// The server went away or could not be reached; retrying with backoff.
    case disconnected(reason: String)
    /// The graph started or stopped scheduling our stream.
    case streaming(Bool)
    /// A stop's fade-out ended and the stream is inactive.
    case stopped
    /// The sink our stream is linked to, by `node.name`.
    case route(String?)
    /// A soundscape failed while decoding ahead.
    case decodeFailed(SoundscapeDecodeError)
    /// The stream should run but no cycle has advanced for the stall grace
    /// period, while the server answers: our stream is stuck.
    case stalled
    /// No cycle has advanced, and the server does not answer either (it is
    /// frozen or overloaded): nothing of ours needs replacing; once it answers,
    /// either audio flows again (`.flowing`) or `.stalled` follows.
    case serverUnresponsive
    /// After `.stalled`: cycles run again.
    case flowing
    /// Sinks, the default sink, or calls changed.
    case graph(GraphFacts)
}

public struct OutputConfiguration: Sendable {
    public var nodeName = "soundscaped"
    public var applicationName = "soundscaped"
    public var nodeDescription = "Soundscape"
    /// Requested quantum (`node.latency`, frames at 48 kHz). A background loop
    /// needs no low latency, and a large quantum means few wake-ups; the server
    /// caps it at `clock.max-quantum`.
    public var latencyFrames = Settings.latencyFrames.defaultValue
    /// Frames read ahead per voice (2^15 ≈ 0.68 s, 256 KiB), refilled when half
    /// empty: from the PCM cache on the data thread right after a cycle, which
    /// needs little slack; by the loop thread while a voice still decodes, with
    /// 0.34 s to spare for a decode that takes a few milliseconds, or when the
    /// page cache has not delivered by the time a quarter is left (0.17 s).
    public var ringFrames = 1 << 15
    public var render = RenderSettings()
    /// Where decoded loops are kept (see `PCMCache`); nil decodes every pass.
    public var pcmCacheDirectory: String?
    /// The most disk space decoded loops may take together.
    public var pcmCacheBudgetBytes = PCMCache.defaultBudgetBytes
    /// What counts as a call, and so interrupts us.
    public var callDetection = CallDetection()
    /// How long an active stream may go without a processed cycle before it
    /// counts as stalled. Checked by a timer that each refill pushes back, so a
    /// healthy stream costs no extra wake-up.
    public var stallGrace: Duration = .seconds(3)
    /// Reconnect delays after the server goes away.
    public var reconnectInitial: Duration = .milliseconds(250)
    public var reconnectMaximum: Duration = .seconds(10)

    public init() {}
}
