import SoundscapeCore
import SoundscapeLibrary

/// A reloaded configuration (SIGHUP or `Reload()`), applied to what the player owns.
extension Player {
    /// Soundscape locations take effect at the next list or play. The signer
    /// host's process settings apply at its next start, its timing and limits
    /// at once; a signer host newly configured starts with the session (at once
    /// if one runs), and one no longer configured is stopped. `makeHost` builds a
    /// host for a configuration that had none. Returns what could not be done.
    func reconfigure(
        locations: SoundscapeCatalog.Locations, signer configuration: SignerConfiguration?,
        makeHost: (SignerConfiguration) throws -> SignerHost
    ) async -> String? {
        await untilRunning()
        loader.relocate(locations)
        switch (signer, configuration) {
        case (let supervisor?, let configuration?):
            performSigner(supervisor.reconfigure(configuration))
        case (nil, let configuration?):
            do {
                let host = try makeHost(configuration)
                signerHost = host
                let supervisor = makeSupervisor(host)
                signer = supervisor
                performSigner(supervisor.session(signerSession))
            } catch {
                return "cannot set up the signer host: \(error)"
            }
        case (let supervisor?, nil):
            performSigner(supervisor.retire())
            if supervisor.hasInstance { await withCheckedContinuation { supervisor.whenStopped($0) } }
            signer = nil
            signerHost = nil
        case (nil, nil):
            break
        }
        return nil
    }
}
