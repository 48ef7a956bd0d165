import SoundscapeCore

/// The one line `systemctl --user status soundscaped` shows under the unit's name.
///
/// Written for a person glancing at a terminal: what plays, how loud, where, and what
/// the daemon is waiting for when nothing plays. The event reason says why a
/// recovering daemon is waiting, which the state alone does not.
public enum SystemdStatusLine {
    public static func text(for status: PlayerStatus, reason: EventReason? = nil) -> String {
        let what = "\(status.soundscape) at \(status.volume.percent)%"
        var line: String
        switch status.state {
        case .stopped:
            line = "Stopped (\(what) when played)"
        case .playing where status.isPlaying:
            line = "Playing \(what)" + (status.route.map { " on \($0)" } ?? "")
        case .playing, .resuming:
            line = "Starting \(what)"
        case .paused:
            line = "Paused (\(what) when resumed); the session goes on"
        case .interrupted where status.cuePlaying:
            line = "Signer down: the cue plays; \(what) resumes when signing is back"
        case .interrupted:
            line = "Interrupted; \(what) resumes when allowed"
        case .recovering:
            line =
                reason == .serverLost
                ? "PipeWire not available; retrying (\(what))"
                : "No audio flowing; recovering (\(what))"
        }
        if let signer = status.signer, signer.state != .stopped {
            line +=
                "; signer \(signer.state.rawValue)" + (signer.health == .unhealthy ? ", unhealthy" : "")
                + (signer.pid.map { " (pid \($0))" } ?? "")
        }
        return line
    }
}
