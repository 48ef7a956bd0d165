import SoundscapeCore

/// Timings of the audio path. Values are in frames at 48 kHz so the real-time
/// code does no time arithmetic.
public struct RenderSettings: Sendable, Equatable {
    public static let sampleRate = 48_000

    /// A full 0→100 % volume change takes this long; smaller changes are
    /// proportionally quicker. 40 ms is below what reads as a fade but far
    /// above the few samples that would click.
    public var volumeRampFrames: Int
    /// Fade-in on the user's play (`FadeIn.gentle`) and fade-out on stop.
    public var fadeInFrames: Int
    public var fadeOutFrames: Int
    /// Fade-in on a return after a call, a PipeWire restart or a daemon restart
    /// (`FadeIn.prompt`): as long as a full volume ramp, so it does not click,
    /// and linear in gain (`Renderer`), so it is heard at once.
    public var promptFadeInFrames: Int
    /// Equal-power crossfade when switching soundscapes while playing.
    public var crossfadeFrames: Int

    public init(
        volumeRamp: Duration = .milliseconds(40), fadeIn: Duration = .milliseconds(300),
        promptFadeIn: Duration = .milliseconds(40),
        fadeOut: Duration = .milliseconds(250), crossfade: Duration = .milliseconds(600)
    ) {
        volumeRampFrames = Self.frames(volumeRamp)
        fadeInFrames = Self.frames(fadeIn)
        promptFadeInFrames = Self.frames(promptFadeIn)
        fadeOutFrames = Self.frames(fadeOut)
        crossfadeFrames = Self.frames(crossfade)
    }

    public func fadeInFrames(_ fade: FadeIn) -> Int {
        switch fade {
        case .gentle: fadeInFrames
        case .prompt: promptFadeInFrames
        }
    }

    static func frames(_ duration: Duration) -> Int {
        max(1, Int(duration.inMicroseconds()) * sampleRate / 1_000_000)
    }
}
