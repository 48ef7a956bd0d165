import Foundation
import SoundscapeCore
@testable import SoundscapeStore
import Testing
import TestSupport
@testable import SoundscapeDaemon

private typealias H = PlayerHarness

/// Saved mixes through the real `Player`, its store on disk and its events.
@Suite struct PlayerMixTests {
    /// A stopped player whose mix is rain alone (saved by an earlier run).
    private static func stoppedOnRain(mixes: [SavedMix] = []) throws -> H {
        try H(saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: false), mixes: mixes)
    }

    private static func onDisk(_ harness: H) throws -> [SavedMix] {
        try StateStore(directory: harness.directory.appendingPathComponent("state").path).loadMixes()
    }

    @Test func saveKeepsTheLayersOnDiskBeforeItAnswersAndNamesWhatPlays() async throws {
        let harness = try Self.stoppedOnRain()
        try await harness.start()
        _ = try await harness.player.setLayer(H.wind, level: 40)
        let saved = try await harness.player.saveMix("night")
        #expect(saved.layers == [Mix.Layer(H.rain), Mix.Layer(H.wind, level: 40)])
        #expect(saved.name == "night")
        // Answered: already on disk, read through a connection of its own.
        #expect(
            try Self.onDisk(harness) == [
                SavedMix(
                    name: "night",
                    layers: [PersistedLayer(soundscape: "rain", level: 100), PersistedLayer(soundscape: "wind", level: 40)])
            ])
        let event = try await harness.nextEvent(.mixesChanged)
        #expect(event.message?.contains("night") == true, "\(event.message ?? "no message")")
        #expect(await harness.player.status().mix == "night")
        // A change of a layer makes it a mix of its own again.
        _ = try await harness.player.setLayer(H.wind, level: 50)
        #expect(await harness.player.status().mix == nil)
        await harness.shutdown()
    }

    @Test func aSaveTheDatabaseRefusedIsWrittenWithTheNextChange() async throws {
        let harness = try H(
            saved: PersistedState(volume: 50, soundscape: "rain", wantsPlaying: false), saveWait: .milliseconds(200))
        try await harness.start()
        // Another process holds the write lock past SQLite's 2 s busy timeout: the write fails.
        let holder = try SQLiteConnection(
            path: harness.directory.appendingPathComponent("state").appendingPathComponent(StateStore.fileName).path)
        try holder.execute("BEGIN IMMEDIATE")
        let player = harness.player
        let keeper = await player.keeper
        let answer = Task { try await player.saveMix("night") }
        try await harness.clock.waitForScheduledCall("the bound on the answer's write")
        harness.clock.advance(by: .milliseconds(200))
        #expect(try await answer.value.name == "night", "answered at the bound")
        try await withTimeout("the refused write (SQLite's busy timeout is 2 s)", seconds: 8) {
            await keeper.saved()
        }
        #expect(keeper.writeFailure != nil, "the locked database refused the write")
        try holder.execute("COMMIT")
        // The next change writes what was refused, in order, before its own.
        _ = await player.setVolume(Volume(percent: 30)!)
        #expect(try Self.onDisk(harness).map(\.name) == ["night"])
        #expect(keeper.writeFailure == nil)
        await harness.shutdown()
    }

    @Test func savingUnderAnExistingNameReplacesTheMix() async throws {
        let harness = try Self.stoppedOnRain()
        try await harness.start()
        _ = try await harness.player.saveMix("night")
        _ = try await harness.player.setLayer(H.wind, level: 30)
        _ = try await harness.player.saveMix("night")
        let mixes = await harness.player.savedMixes()
        #expect(mixes.count == 1)
        #expect(mixes.first?.layers == [Mix.Layer(H.rain), Mix.Layer(H.wind, level: 30)])
        #expect(try Self.onDisk(harness).map(\.layers.count) == [2])
        await harness.shutdown()
    }

    @Test(arguments: ["rain", ".hidden", "-x", "a/b", ""])
    func aNameThatIsASoundscapeOrNoPlainNameIsRefused(_ name: String) async throws {
        let harness = try Self.stoppedOnRain()
        try await harness.start()
        do {
            _ = try await harness.player.saveMix(name)
            Issue.record("saving '\(name)' was not refused")
        } catch {
            guard case .refused(let reason) = error else {
                Issue.record("'\(name)': \(error), not a refusal")
                return
            }
            #expect(reason.contains(name == "rain" ? "soundscape's id" : "cannot name a mix"), "\(reason)")
        }
        #expect(await harness.player.savedMixes().isEmpty)
        #expect(try Self.onDisk(harness).isEmpty)
        await harness.shutdown()
    }

    @Test func aSavedMixIsReadAtStartAndPlaysByItsName() async throws {
        let first = try Self.stoppedOnRain()
        try await first.start()
        _ = try await first.player.setLayer(H.wind, level: 40)
        _ = try await first.player.saveMix("night")
        await first.shutdown()

        // A second player on what the first one wrote: the mix is read at its start.
        let harness = try H(
            saved: PersistedState(volume: 50, soundscape: "ocean-waves", wantsPlaying: false),
            mixes: try Self.onDisk(first))
        try await harness.start()
        harness.output.report(.connected)
        #expect(await harness.player.savedMixes().map(\.name) == ["night"])
        let player = harness.player
        let night = SoundscapeID("night")!
        let reply = Task { try await player.play(named: night) }
        try await harness.output.waitForCall(.playLayers([Mix.Layer(H.rain), Mix.Layer(H.wind, level: 40)], Volume(percent: 50)!))
        harness.output.report(.streaming(true))
        let status = try await reply.value
        #expect(status.mix == "night")
        #expect(status.layers == [Mix.Layer(H.rain), Mix.Layer(H.wind, level: 40)])
        // What plays is saved as the named mix: a restart plays it under its name.
        #expect(try await harness.savedState()?.mixName == "night")
        await harness.shutdown()
    }

    @Test func aSoundscapesIDWinsOverAMixOfTheSameName() async throws {
        // Saved before a soundscape of that name came (by hand here: save refuses it).
        let harness = try Self.stoppedOnRain(mixes: [
            SavedMix(name: "wind", layers: [PersistedLayer(soundscape: "rain", level: 100)])
        ])
        try await harness.start()
        #expect(await harness.player.savedMixes().map(\.name) == ["wind"])
        harness.output.report(.connected)
        let player = harness.player
        let reply = Task { try await player.play(named: H.wind) }
        try await harness.output.waitForCall(.play(H.wind, Volume(percent: 50)!))
        harness.output.report(.streaming(true))
        #expect(try await reply.value.mix == nil)
        do {
            _ = try await player.play(named: SoundscapeID("nothing-here")!)
            Issue.record("a name that is neither a soundscape nor a mix played")
        } catch {
            #expect(error == .noSuchSoundscape(SoundscapeID("nothing-here")!))
        }
        do {
            _ = try await player.play(mixNamed: "nothing-here")
            Issue.record("Play(mix:) of no saved mix played")
        } catch {
            #expect(error == .noSuchMix("nothing-here"))
        }
        await harness.shutdown()
    }

    @Test func deleteRemovesTheMixAndItsNameFromWhatPlays() async throws {
        let harness = try Self.stoppedOnRain()
        try await harness.start()
        _ = try await harness.player.saveMix("night")
        #expect(await harness.player.status().mix == "night")
        try await harness.player.deleteMix("night")
        #expect(await harness.player.savedMixes().isEmpty)
        #expect(try Self.onDisk(harness).isEmpty)
        #expect(await harness.player.status().mix == nil)
        #expect(await harness.player.status().layers == [Mix.Layer(H.rain)])
        do {
            try await harness.player.deleteMix("night")
            Issue.record("deleting a mix twice was not refused")
        } catch {
            #expect(error == .noSuchMix("night"))
        }
        await harness.shutdown()
    }
}
