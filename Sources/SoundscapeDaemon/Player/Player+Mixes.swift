import SoundscapeCore
import SoundscapeStore

/// Saved mixes: layers and levels kept under a name, to be played again
/// (`soundscapectl save NAME`, `play NAME`, `delete NAME`). The player keeps
/// them in memory, read at start with the saved state (`StateKeeper`); each
/// change is written on the database's thread, and a command is answered once
/// it is written, as every other change is.
extension Player {
    /// The saved mixes, sorted by name, each with its name.
    public func savedMixes() async -> [Mix] {
        await untilRunning()
        return mixes
    }

    /// Plays `name`: the soundscape of that id, else the saved mix of that name
    /// (a soundscape's id wins: a mix cannot be saved under one, but a file of
    /// that name may come later). One trip to the worker decides and opens.
    public func play(named name: SoundscapeID) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        return try await play(Mix(name), unlessMissing: savedMix(name.rawValue))
    }

    /// Plays the saved mix `name`; the status's `mix` names it while it plays unchanged.
    public func play(mixNamed name: String) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        guard let mix = savedMix(name) else { throw .noSuchMix(name) }
        return try await play(mix: mix)
    }

    /// Saves what plays (or would play on Play) as `name`, replacing a mix of
    /// that name. The name follows the rules of a soundscape's id and must not
    /// be one (`play NAME` would be ambiguous).
    public func saveMix(_ name: String) async throws(PlayerError) -> Mix {
        await untilRunning()
        guard let id = SoundscapeID(name) else {
            throw .refused(
                "'\(name)' cannot name a mix: a name has letters, digits, spaces and - _ . + ( ) , ' only, "
                    + "does not begin with . or -, and has at most \(SoundscapeID.maximumLength) bytes")
        }
        catalog = await loader.scan()
        if catalog.entry(id) != nil {
            throw .refused("'\(name)' is a soundscape's id; give the mix another name")
        }
        var mix = machine.desired.mix
        mix.name = name
        let saved = mix
        mixes.removeAll { $0.name == name }
        mixes.append(saved)
        mixes.sort { ($0.name ?? "") < ($1.name ?? "") }
        keeper.change(.save(SavedMix(name: name, layers: saved.persisted)))
        // What plays is the saved mix now, unchanged: the status names it.
        apply(.setMix(saved))
        hub.publish(type: .player, reason: .mixesChanged, message: "saved \(name): \(saved)", status: currentStatus())
        return await answer(saved)
    }

    /// Deletes the saved mix `name`. What plays goes on; it is no longer named so.
    public func deleteMix(_ name: String) async throws(PlayerError) {
        await untilRunning()
        guard savedMix(name) != nil else { throw .noSuchMix(name) }
        mixes.removeAll { $0.name == name }
        keeper.change(.delete(name))
        if machine.desired.mix.name == name {
            var unnamed = machine.desired.mix
            unnamed.name = nil
            apply(.setMix(unnamed))
        }
        hub.publish(type: .player, reason: .mixesChanged, message: "deleted \(name)", status: currentStatus())
        _ = await answer(())
    }

    private func savedMix(_ name: String) -> Mix? {
        mixes.first { $0.name == name }
    }
}
