import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary

/// Facts from the audio output and the signer host, reported to the machines;
/// and the soundscape files the player keeps open for them.
extension Player {
    func handle(_ event: AudioOutputEvent) async {
        switch event {
        case .connected: apply(.outputConnected)
        case .disconnected(let reason): apply(.outputDisconnected(reason: reason))
        case .streaming(let streaming): apply(.outputStreaming(streaming))
        case .stopped: apply(.outputStopped)
        case .route(let route): apply(.routeChanged(route))
        case .graph(let facts): apply(.graphChanged(facts))
        case .stalled: apply(.outputStalled)
        case .serverUnresponsive: apply(.outputServerUnresponsive)
        case .flowing: apply(.outputFlowing)
        case .decodeFailed(let error):
            logger.error("\(error)")
            loaded[error.soundscape] = nil
            let fallback = await fallback(for: error.soundscape)
            apply(.decodeFailed(error.soundscape, message: error.description, fallback: fallback))
        }
    }

    // MARK: Loaded soundscapes

    /// Opens `id` on the worker and keeps it (with `alongside`, opened before it
    /// for the same mix); the error if it does not open.
    func open(_ id: SoundscapeID, alongside: [SoundscapeID] = []) async -> SoundscapeDecodeError? {
        let (catalog, result) = await loader.load(id)
        self.catalog = catalog
        switch result {
        case .success(let data):
            keepLoaded([data], alongside: alongside)
            return nil
        case .failure(.noSuchSoundscape(let id)):
            return SoundscapeDecodeError(soundscape: id, reason: "it is no longer available")
        case .failure(.decodeFailed(let error)):
            return error
        }
    }

    /// The default soundscape, opened, to play instead of `id`; nil when `id` is
    /// the default or the default does not open either.
    private func fallback(for id: SoundscapeID) async -> SoundscapeID? {
        let fallback = catalog.defaultID
        guard fallback != id else { return nil }
        if loaded[fallback] != nil { return fallback }
        if let error = await open(fallback) {
            logger.error("\(error)")
            return nil
        }
        return fallback
    }

    /// Keeps `data` and what plays; a handful of loops would otherwise pile up.
    func keepLoaded(_ data: SoundscapeData) {
        keepLoaded([data])
    }

    /// Keeps what plays and what is about to; lets go of the rest.
    func keepLoaded(_ opened: [SoundscapeData], alongside: [SoundscapeID] = []) {
        let keep = Set(machine.desired.mix.soundscapes + opened.map(\.id) + alongside)
        loaded = loaded.filter { keep.contains($0.key) }
        for data in opened { loaded[data.id] = data }
    }

    // MARK: The signer host

    func makeSupervisor(_ host: SignerHost) -> SignerSupervisor<SignerHost> {
        let clock = self.clock
        return SignerSupervisor(host: host, logger: logger, now: { clock.now }) { [weak self] fact in
            await self?.signerFact(fact)
        }
    }

    private func signerFact(_ fact: SignerFact<SpawnedSigner>) {
        performSigner(signer?.handle(fact) ?? [])
    }

    /// SIGTERM, SIGKILL after the stop timeout, and wait until the group is gone.
    func stopSigner() async {
        guard let signer else { return }
        performSigner(signer.shutdown())
        guard signer.hasInstance else { return }
        await withCheckedContinuation { signer.whenStopped($0) }
    }
}
