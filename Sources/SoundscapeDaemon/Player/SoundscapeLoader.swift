import Glibc
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem
import Synchronization

/// Scans the soundscape directories and opens soundscape files, on the worker
/// thread. Opening one validates its Ogg pages and hashes it whole (the PCM
/// cache's key): tens of milliseconds for a long user recording, which must
/// never hold up the event loop that answers the control socket. The hash of a
/// file opened before, and unchanged since, comes from `FingerprintMemo`, and
/// so does its validation when this run did it. A mix's layers open in one job.
///
/// A scan is redone only when a directory or manifest changed (`SoundscapeCatalog.Stamp`):
/// listing 200 files again for every `list` would cost milliseconds of CPU each time.
final class SoundscapeLoader: Sendable {
    enum Failure: Error, Sendable, Equatable {
        case noSuchSoundscape(SoundscapeID)
        case decodeFailed(SoundscapeDecodeError)
    }

    let worker: WorkerThread
    /// Nil without a PCM cache (`--cache-dir none`): then every open hashes.
    let fingerprints: FingerprintMemo?
    /// Where to look; a reload may change the extra directories.
    private let searched = Mutex<SoundscapeCatalog.Locations>(.init(builtin: nil, extra: [], user: nil))
    /// The last scan and what it depended on; touched on the worker thread only.
    private let last = Mutex<(stamp: SoundscapeCatalog.Stamp, catalog: SoundscapeCatalog)?>(nil)

    init(locations: SoundscapeCatalog.Locations, worker: WorkerThread, fingerprints: FingerprintMemo? = nil) {
        searched.withLock { $0 = locations }
        self.worker = worker
        self.fingerprints = fingerprints
    }

    var locations: SoundscapeCatalog.Locations {
        searched.withLock { $0 }
    }

    /// New locations (a reload): the next scan reads them.
    func relocate(_ locations: SoundscapeCatalog.Locations) {
        searched.withLock { $0 = locations }
    }

    /// The catalog as the directories are now.
    func scan() async -> SoundscapeCatalog {
        await startScan().value
    }

    /// Begins a scan on the worker (after what is queued there); the caller awaits it later.
    /// `cleaningUp` (the daemon's start): first removes what crashed imports left in the
    /// user's folder (`ImportFolder`), which no list shows.
    func startScan(cleaningUp: Bool = false) -> WorkerThread.Job<SoundscapeCatalog> {
        worker.start { [self] in
            if cleaningUp, let user = locations.user { ImportFolder.cleanUp(user) }
            return current()
        }
    }

    /// The catalog as it is now (the file may be new, or gone), and `id` opened.
    func load(_ id: SoundscapeID) async -> (catalog: SoundscapeCatalog, result: Result<SoundscapeData, Failure>) {
        let (catalog, result) = await load([id])
        return (catalog, result.map { $0[0] })
    }

    /// The catalog as it is now, and each of `ids` opened, in one trip to the
    /// worker (one catalog check for the mix); the first that does not open is the failure.
    /// With `unlessMissing`: those instead when the first of `ids` is not in the catalog.
    func load(_ ids: [SoundscapeID], unlessMissing fallback: [SoundscapeID]? = nil) async -> (
        catalog: SoundscapeCatalog, result: Result<[SoundscapeData], Failure>
    ) {
        await worker.run { [self] in
            let catalog = current()
            let missing = ids.first.map { catalog.entry($0) == nil } ?? false
            let wanted = missing ? fallback ?? ids : ids
            var opened: [SoundscapeData] = []
            for id in wanted {
                switch Self.open(id, in: catalog, fingerprints: fingerprints) {
                case .success(let data): opened.append(data)
                case .failure(let failure): return (catalog, .failure(failure))
                }
            }
            return (catalog, .success(opened))
        }
    }

    var signerDownCuePath: String? { locations.signerDownCuePath }

    /// Begins opening the signer-down cue on the worker: nil when it is missing or does not open.
    func startLoadingSignerDownCue() -> WorkerThread.Job<SoundscapeData?> {
        guard let path = signerDownCuePath else { return .finished(nil) }
        return worker.start { try? SoundscapeData(id: .signerDownCue, gain: 1, path: path) }
    }

    /// On the worker thread: the last scan while nothing it read has changed, else a new one.
    private func current() -> SoundscapeCatalog {
        let locations = self.locations
        let stamp = SoundscapeCatalog.stamp(locations)
        if let last = last.withLock({ $0 }), last.stamp == stamp { return last.catalog }
        let catalog = SoundscapeCatalog.scan(locations)
        last.withLock { $0 = (stamp, catalog) }
        return catalog
    }

    /// Opens `id` from an existing scan (on the calling thread: call it on the worker).
    static func open(
        _ id: SoundscapeID, in catalog: SoundscapeCatalog,
        fingerprints: FingerprintMemo? = nil
    ) -> Result<SoundscapeData, Failure> {
        guard let entry = catalog.entry(id) else { return .failure(.noSuchSoundscape(id)) }
        do throws(SoundscapeDecodeError) {
            var opened = stat()
            var known: SoundscapeData.Known?
            let data = try SoundscapeData(id: entry.id, gain: entry.gain, path: entry.path) { info in
                opened = info
                known = fingerprints?.known(of: entry.path, info)
                return known
            }
            if known == nil { fingerprints?.remember(data.fingerprint, of: entry.path, opened) }
            // Validated whole just now: the next open of the file unchanged need not be.
            if known?.frames == nil {
                fingerprints?.rememberValidated(data.frames, fingerprint: data.fingerprint, of: entry.path, opened)
            }
            return .success(data)
        } catch {
            return .failure(.decodeFailed(error))
        }
    }
}
