import SoundscapeAudio
import SoundscapeCore
import SoundscapeStore

/// Carrying out what the machines decide. Each action carries what it needs;
/// nothing here reads the machine to decide anything.
extension Player {
    /// Feeds `input` to the machine and performs what it returns, then lets the
    /// signer follow the session and wakes callers whose start has settled.
    ///
    /// An input that carrying out an action causes (a file that turns out not
    /// to be open) is never fed back in the middle of the actions: it waits in
    /// the inbox until they are all done, then goes in. The input being handled
    /// stays first in the inbox meanwhile, which is how a nested call knows.
    func apply(_ input: PlayerMachine.Input) {
        inbox.append(input)
        guard inbox.count == 1 else { return }
        while let next = inbox.first {
            let now = clock.now
            for action in machine.handle(next, now: now) { perform(action) }
            settled(now: now)
            reconcileKeepAwake()
            inbox.removeFirst()
        }
    }

    private func perform(_ action: PlayerMachine.Action) {
        switch action {
        case .startOutput(let mix, let volume, let fade):
            play(mix, volume: volume, fadeIn: fade)
        case .changeMix(let mix, let volume):
            // Layer by layer while audible; a fade-in under way keeps its pace.
            play(mix, volume: volume, fadeIn: .gentle)
        case .dim(let duration):
            output.dim(over: duration)
        case .undim:
            output.undim()
        case .setVolume(let volume):
            output.setVolume(volume)
        case .stopOutput:
            output.stop()
        case .persist(let desired):
            keeper.save(PersistedState(desired))
        case .persistPreferences(let preferences):
            keeper.save(preferences)
        case .emit(let reason, let message, let cause):
            hub.publish(type: .player, reason: reason, message: message, cause: cause, status: currentStatus())
        case .setTarget(let sink):
            output.setTarget(sink)
        case .scheduleTick(let deadline):
            scheduleTick(at: deadline)
        case .revive(let step):
            logger.warning("watchdog: audio stalled; \(step)")
            switch step {
            case .reactivate: output.reactivate()
            case .recreateStream: output.recreateStream()
            case .reconnect: output.reconnectNow(reason: "the watchdog found audio stalled")
            }
        case .signerSession(let wanted):
            signerSession = wanted
            performSigner(signer?.session(wanted) ?? [])
        }
    }

    private func play(_ mix: Mix, volume: Volume, fadeIn: FadeIn) {
        var layers: [LayerData] = []
        for layer in mix.layers {
            guard let data = layer.soundscape == .signerDownCue ? cue : loaded[layer.soundscape] else {
                // The machine only plays what `play`, the restore or a fallback opened first.
                let id = layer.soundscape
                logger.error("'\(id)' was to play but is not open; stopping")
                apply(.decodeFailed(id, message: "cannot play '\(id)': it is not open", fallback: nil))
                return
            }
            layers.append(LayerData(data, level: layer.level))
        }
        output.play(layers, volume: volume, fadeIn: fadeIn)
    }

    /// The signer machine's actions that are the player's (`SignerSupervisor` carries out the rest).
    func performSigner(_ actions: [SignerMachine.Action]) {
        for action in actions {
            switch action {
            case .emit(let reason, let message):
                hub.publish(type: .signer, reason: reason, message: message, status: currentStatus())
            case .scheduleTick(let deadline):
                scheduleTick(at: deadline)
            case .availability(let availability):
                // PlayerMachine decides what the sink carries meanwhile.
                apply(.signer(availability))
            case .spawn, .terminate, .kill, .probe, .cancelProbe:
                // The process's: the supervisor carried them out and returns none of them.
                assertionFailure("the signer supervisor returned \(action)")
            }
        }
    }
}
