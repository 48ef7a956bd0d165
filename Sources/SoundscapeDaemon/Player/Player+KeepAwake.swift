import SoundscapeCore

/// The `keep-awake` preference: a logind sleep inhibitor held while a
/// keep-alive session runs (`KeepAwakeMachine` decides, `SleepInhibitor` holds).
extension Player {
    /// Wanted while the preference is on and the user wants the session (playing,
    /// paused or interrupted: whenever the signer should be up), never in shutdown.
    func reconcileKeepAwake() {
        let wanted = machine.preferences.keepAwake && machine.desired.wantsSession && !isShuttingDown
        handleKeepAwake(.wanted(wanted))
    }

    func keepAwakeHeld(attempt: Int) {
        handleKeepAwake(.held(attempt: attempt))
    }

    func keepAwakeEnded(attempt: Int, reason: String) {
        inhibitors[attempt] = nil
        handleKeepAwake(.ended(attempt: attempt, reason: reason))
    }

    private func handleKeepAwake(_ input: KeepAwakeMachine.Input) {
        let before = keepAwake.state
        for action in keepAwake.handle(input) {
            switch action {
            case .take(let attempt):
                do {
                    inhibitors[attempt] = try SleepInhibitor(
                        environment: inhibitorEnvironment,
                        held: { Task { await self.keepAwakeHeld(attempt: attempt) } },
                        ended: { reason in Task { await self.keepAwakeEnded(attempt: attempt, reason: reason) } })
                } catch {
                    handleKeepAwake(.ended(attempt: attempt, reason: error.description))
                }
            case .release(let attempt):
                inhibitors.removeValue(forKey: attempt)?.release()
            }
        }
        let after = keepAwake.state
        guard after != before else { return }
        switch after {
        case .held: logger.info("keep-awake: holding a sleep:idle inhibitor while the session runs")
        case .unavailable(let reason): logger.warning("keep-awake: no sleep inhibitor: \(reason)")
        case .idle:
            if case .held = before { logger.info("keep-awake: sleep inhibitor released") }
        case .taking: break
        }
    }
}
