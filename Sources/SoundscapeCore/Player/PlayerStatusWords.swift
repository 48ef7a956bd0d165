/// A status in the words `soundscapectl` prints: what plays, and when the soundscape
/// is wanted but not heard, what holds it. In Core, beside the status, so the words
/// are tested against every cause and clients cannot drift apart.
extension PlayerStatus {
    /// The state, with what the sink carries when that is not plain: the signer's cue, or
    /// silence held for the signer, is said as such, not as "no audio flowing".
    public var stateInWords: String {
        if interruptions.contains(InterruptionCause.signerDown.rawValue) || cuePlaying {
            return "\(state.rawValue) (signer down: \(cuePlaying ? "the cue plays" : "silent"))"
        }
        if interruptions.contains(InterruptionCause.muted.rawValue) { return "\(state.rawValue) (volume 0: silent)" }
        if interruptions.contains(InterruptionCause.asleep.rawValue) {
            return "\(state.rawValue) (asleep: silent until play; the keep-alive goes on)"
        }
        switch state {
        case .stopped, .paused: return state.rawValue
        case .resuming: return "resuming (sound follows in a moment)"
        case .playing, .interrupted, .recovering: return state.rawValue + (isPlaying ? "" : " (no audio flowing)")
        }
    }

    /// What plays, or would play: the saved mix's name, the soundscape alone, or the
    /// layers with their levels (`rain + fire=40`).
    public var playsInWords: String {
        let layers = self.layers.map { Mix.Layer($0.soundscape, level: $0.level).description }.joined(separator: " + ")
        guard let mix else { return layers }
        return "\(mix) (\(layers))"
    }

    /// The sleep timer in words, while one is set.
    public var sleepInWords: String? {
        guard let sleep else { return nil }
        let left = sleep.remaining.map { SleepTimer.describe(.seconds($0)) } ?? "?"
        let ends = sleep.ends.map { " (at \($0))" } ?? ""
        switch sleep.state {
        case .counting: return "the sound fades away in \(left)\(ends)"
        case .fading: return "fading away, silent in \(left)\(ends)"
        case .asleep: return "asleep: silent until play, the keep-alive goes on"
        }
    }

    /// Why a `play` just answered does not sound yet, naming the real cause; nil when it plays.
    public var playHold: String? {
        guard !isPlaying else { return nil }
        if interruptions.contains(InterruptionCause.signerDown.rawValue) {
            let signer = signer.map { " (\($0.summary))" } ?? ""
            return """
                \(playsInWords) waits for the signer host, which is down\(signer): the soundscape plays \
                once signing is up again (play restarts a signer that failed)
                """
        }
        if interruptions.contains(InterruptionCause.muted.rawValue) {
            return "\(playsInWords) plays silently: the volume is 0, and the keep-alive goes on until it is raised"
        }
        return "\(playsInWords) will play as soon as audio output is available (state: \(state.rawValue))"
    }
}

extension SignerStatus {
    /// The signer host in a line: its state, pid, restarts, health, and how the last
    /// instance ended while none runs (`failed, 4 restarts, last exited with status 3`).
    public var summary: String {
        var text = state.rawValue
        if let pid { text += ", pid \(pid)" }
        if state == .starting, pid != nil { text += ", not ready yet" }
        text += ", \(restarts) restart\(restarts == 1 ? "" : "s")"
        switch health {
        case .unknown: break
        case .healthy: text += ", healthy"
        case .unhealthy: text += ", UNHEALTHY (its health check fails)"
        case .degraded: text += ", DEGRADED (it signs, but its health check warns)"
        }
        // How the last instance ended explains a signer that is not running; once a later
        // one runs, it is history (`status --json` keeps it as lastExit), not the headline.
        if let lastExit, pid == nil { text += ", last \(lastExit)" }
        // Only a crash limit gives up (signer-crash-limit, 0 by default: never); say what mends it.
        if state == .failed { text += "; it reached \(Settings.signerCrashLimit.key): `soundscapectl play` starts it again" }
        return text
    }
}
