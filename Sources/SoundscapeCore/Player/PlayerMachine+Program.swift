/// What the output plays: the mix, the signer-down cue, or nothing.
///
/// The sound is the user's proof that the keep-alive works, so it must not
/// carry the soundscape while the signer is down (unless the user chose
/// `signer-down-sound = keep`), and it goes quiet, stream and all, at volume
/// off: a running sink keeps a laptop's sound card powered for nothing.
extension PlayerMachine {
    /// The volume is off: no stream, so the sink can suspend (the session, its
    /// signer and its health checks go on).
    var muted: Bool {
        desired.wantsPlaying && desired.volume.percent == 0
    }

    /// The sleep timer ran out while the user wants sound: silent, as at volume off.
    var asleep: Bool {
        desired.wantsPlaying && sleep.isAsleep
    }

    /// The signer is down and the user does not want the soundscape to play on regardless.
    var holdsOffForSigner: Bool {
        guard desired.wantsPlaying, case .down = signer else { return false }
        return policy.preferences.signerDownSound != .keep
    }

    /// What the output should play now; nil is silence (the output idles).
    ///
    /// A call and a call route keep their precedence: no cue ever plays into
    /// a call, whatever the interruption mode.
    var program: Mix? {
        guard desired.wantsPlaying, policy.effect != .pausing, !muted, !asleep else { return nil }
        guard holdsOffForSigner else { return desired.mix }
        let inCall = !(policy.graph?.communicationStreams.isEmpty ?? true) || policy.effect == .ducking
        guard policy.preferences.signerDownSound == .cue, configuration.hasSignerDownCue, !inCall else { return nil }
        return Mix(.signerDownCue)
    }

    /// The interruption an `interrupted` event names: what a call pauses us for
    /// first, then the signer, then the volume, then the server's pause.
    func mainInterruption(of causes: Set<InterruptionCause>) -> InterruptionCause {
        if policy.pauses(causes) { return policy.mainCause(of: causes) }
        if causes.contains(.asleep) { return .asleep }
        if causes.contains(.signerDown) { return .signerDown }
        if causes.contains(.muted) { return .muted }
        return policy.mainCause(of: causes)
    }

    func describe(_ cause: InterruptionCause) -> String {
        switch cause {
        case .signerDown:
            let reason: String? = if case .down(let reason) = signer { reason } else { nil }
            let sound =
                policy.preferences.signerDownSound == .cue && configuration.hasSignerDownCue
                ? "the signer-down cue plays instead" : "the soundscape is held off"
            return "the signer is down\(reason.map { " (\($0))" } ?? ""); \(sound)"
        case .muted:
            return "the volume is off; the keep-alive goes on without sound"
        case .asleep:
            return "the sleep timer ran out; the keep-alive goes on without sound until play"
        default:
            return policy.describe(cause)
        }
    }
}
