import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary

/// The player's life, as `PlayerLifecycle` decides it: loading what was saved,
/// serving until the exit, and the exit itself. Waiters live in the
/// lifecycle's states; this only suspends callers there and resumes them.
extension Player {
    /// Starts the output, loads what was saved, and consumes the output's
    /// facts until `shutdown` ends them.
    ///
    /// The output connects first: connecting to PipeWire and making our stream
    /// (inactive, and linked by the session manager meanwhile) need nothing that
    /// was saved, so they run on the output's thread while the saved state and
    /// the soundscape are read. The output's first facts wait in `outputEvents`
    /// until the machine exists; a restored session then starts at once, which
    /// after a crash is what decides how long the keep-alive was silent.
    public func run() async {
        output.start()
        await restore()
        // What was on the way to sound is done: from now on the worker only gets spare CPU.
        worker.moveToBackground()
        for await event in outputEvents {
            if lifecycle.isShuttingDown {
                if event == .stopped { resume(lifecycle.fadeOutEnded()) }
                continue
            }
            await handle(event)
        }
        output.shutdown()
    }

    /// Fades the sound out and stops the signer host, keeping the user's wish
    /// to play (already persisted) so that the next start resumes. Bounded: a
    /// graph that no longer runs us cannot hold up the exit, and the signer gets
    /// its stop timeout before SIGKILL.
    public func shutdown(fadeBound: Duration = .seconds(1)) async {
        guard let released = lifecycle.shutdownBegins() else { return }
        resume(released)
        output.stop()
        let bound = clock.schedule(at: clock.now + fadeBound) { [weak self] in
            Task { await self?.fadeOutBoundPassed() }
        }
        await stopSigner()
        reconcileKeepAwake()
        await withCheckedContinuation { resume(lifecycle.waitForFadeOut($0)) }
        bound.cancel()
        tickTimer?.cancel()
        tickTimer = nil
        ticks.removeAll()
        // What the last commands changed is on disk before the process ends.
        await keeper.saved()
        outputEventSink.finish()
    }

    var isShuttingDown: Bool { lifecycle.isShuttingDown }

    private func fadeOutBoundPassed() {
        resume(lifecycle.fadeOutEnded())
    }

    /// Suspends until the saved state is loaded (at once afterwards).
    func untilRunning() async {
        guard case .starting = lifecycle.state else { return }
        await withCheckedContinuation { resume(lifecycle.waitUntilRunning($0)) }
    }

    /// The saved state and preferences (read on the database's thread) and the
    /// soundscapes (scanned, with the signer-down cue, on the worker), read at
    /// once since the player was made (`startupReads`); then the saved soundscape
    /// opened, and the machine that starts from them. A saved soundscape that has
    /// vanished, or no longer opens, gives way to the default for this run, with a notice.
    private func restore() async {
        let restored = await startupReads.saved.value
        var notices: [String] = []
        catalog = await startupReads.catalog.value
        for problem in catalog.problems { logger.warning("\(problem)") }

        var desired = DesiredState(
            restoring: restored.state,
            over: DesiredState(intent: .stopped, soundscape: catalog.defaultID, volume: .default),
            isAvailable: { catalog.entry($0) != nil })
        if let saved = restored.state {
            let savedIDs = saved.layers.isEmpty ? [saved.soundscape].compactMap { $0 } : saved.layers.map(\.soundscape)
            for name in savedIDs where !desired.mix.soundscapes.map(\.rawValue).contains(name) {
                notices.append(
                    "the saved soundscape '\(name)' is no longer available; "
                        + (desired.mix.isSingle ? "using '\(desired.soundscape)'" : "playing \(desired.mix) without it"))
            }
        }
        let preferences = restored.preferences ?? .default
        mixes = restored.mixes.compactMap { Mix(restoring: $0.layers, name: $0.name, isAvailable: { _ in true }) }
            .filter { $0.name != nil }
        var failure: SoundscapeDecodeError?
        for id in desired.mix.soundscapes {
            failure = await open(id, alongside: desired.mix.soundscapes)
            guard let error = failure else { continue }
            // Like a vanished file: play without it this run (the default, if it was all
            // there was), and keep the user's choice saved (the file may be back, or
            // mended, by the next start).
            if let rest = try? desired.mix.removing(id) {
                notices.append("\(error); playing \(rest) without it")
                desired.mix = rest
                failure = nil
                continue
            }
            guard id != catalog.defaultID else { break }
            notices.append("\(error); using '\(catalog.defaultID)'")
            desired.mix = Mix(catalog.defaultID)
            failure = await open(catalog.defaultID)
            break
        }
        cue = await startupReads.signerDownCue.value
        if cue == nil, signerHost != nil {
            let path = loader.signerDownCuePath ?? "no built-in soundscapes"
            logger.warning("the signer-down cue is missing (\(path)); while the signer is down, silence plays instead")
        }
        var configuration = self.configuration
        configuration.hasSignerDownCue = cue != nil
        machine = PlayerMachine(desired: desired, preferences: preferences, configuration: configuration)
        if let signerHost {
            signer = makeSupervisor(signerHost)
        }

        let callers = lifecycle.restored()
        guard lifecycle.isRunning else { return }
        for notice in restored.notices + notices { logger.warning("\(notice)") }
        hub.setInitialStatus(currentStatus())
        for notice in restored.notices {
            hub.publish(type: .player, reason: .storeProblem, message: notice, status: currentStatus())
        }
        for notice in notices {
            hub.publish(type: .player, reason: .soundscapeChanged, message: notice, status: currentStatus())
        }
        if let failure {
            // Not even the default opens: the machine gives up on playing, and says why.
            apply(.decodeFailed(desired.soundscape, message: failure.description, fallback: nil))
        }
        // The signer host starts with the first input the machine handles (`apply` reconciles
        // it), which is normally the output's first fact: connecting while the state was read
        // has usually queued it already, so a restored session's sound is on its way (a play
        // posted to the output) before the host is spawned, a fork and exec on this loop and a
        // program starting up beside us. The tick bounds the wait when the output is silent.
        if signer != nil { scheduleTick(at: clock.now + Self.signerStartBound) }
        resume(callers)
    }

    /// How long after the restore the signer host starts at the latest (see `restore`).
    static let signerStartBound: Duration = .milliseconds(100)

    // MARK: Settling

    /// Waits until the start the last command made is confirmed or has visibly failed.
    func settle() async {
        guard lifecycle.isRunning, machine.isSettling(now: clock.now) else { return }
        await withCheckedContinuation { resume(lifecycle.waitForSettle($0, settling: true)) }
    }

    /// Lets the plays that wait go on once their start is no longer settling.
    func settled(now: ContinuousClock.Instant) {
        guard !machine.isSettling(now: now) else { return }
        resume(lifecycle.settled())
    }

    // MARK: Time

    /// A tick at `deadline`: the one timer is armed for the earliest pending.
    func scheduleTick(at deadline: ContinuousClock.Instant) {
        guard let earliest = ticks.add(deadline) else { return }
        arm(earliest)
    }

    private func arm(_ deadline: ContinuousClock.Instant?) {
        tickTimer?.cancel()
        tickTimer = deadline.map { deadline in
            clock.schedule(at: deadline) { [weak self] in
                Task { await self?.tick() }
            }
        }
    }

    /// Every deadline re-evaluates everything: the player's machine and the signer's.
    private func tick() {
        arm(ticks.fired(now: clock.now))
        apply(.tick)
        performSigner(signer?.tick() ?? [])
    }
}
