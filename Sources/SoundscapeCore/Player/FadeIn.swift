/// How a start from silence fades in.
///
/// A start the user asked for fades in gently. A return after something cut
/// the sound off (a call, a PipeWire restart, a crash of the daemon itself)
/// fades in promptly: the cut was abrupt anyway, and a fade on the cubic
/// volume curve spends its first third below −60 dB, which for a keep-alive
/// is a longer dropout, not a softer one.
public enum FadeIn: Sendable, Equatable {
    /// 300 ms on the volume curve: `play` from stopped or paused.
    case gentle
    /// 40 ms, like a volume change, long enough not to click; linear in gain,
    /// so it is heard from its first milliseconds.
    case prompt
}
