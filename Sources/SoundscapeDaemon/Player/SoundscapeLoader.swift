import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem

/// Scans the soundscape directories and opens soundscape files, on the worker
/// thread. Opening one validates its Ogg pages and hashes it whole (the PCM
/// cache's key): tens of milliseconds for a long user recording, which must
/// never hold up the event loop that answers the control socket.
struct SoundscapeLoader: Sendable {
    enum Failure: Error, Sendable, Equatable {
        case noSuchSoundscape(SoundscapeID)
        case decodeFailed(SoundscapeDecodeError)
    }

    let locations: SoundscapeCatalog.Locations
    let worker: WorkerThread

    /// A fresh scan of every location.
    func scan() async -> SoundscapeCatalog {
        await worker.run { [locations] in SoundscapeCatalog.scan(locations) }
    }

    /// Scans again (the file may be new, or gone) and opens `id`.
    func load(_ id: SoundscapeID) async -> (catalog: SoundscapeCatalog, result: Result<SoundscapeData, Failure>) {
        await worker.run { [locations] in
            let catalog = SoundscapeCatalog.scan(locations)
            return (catalog, Self.open(id, in: catalog))
        }
    }

    /// Opens `id` from an existing scan (on the calling thread: call it on the worker).
    static func open(_ id: SoundscapeID, in catalog: SoundscapeCatalog) -> Result<SoundscapeData, Failure> {
        guard let entry = catalog.entry(id) else { return .failure(.noSuchSoundscape(id)) }
        do {
            return .success(try SoundscapeData(id: entry.id, gain: entry.gain, path: entry.path))
        } catch {
            return .failure(.decodeFailed(error))
        }
    }
}
