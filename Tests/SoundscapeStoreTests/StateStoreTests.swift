import Foundation
import SoundscapeCore
import Testing
@testable import SoundscapeStore

@Suite struct StateStoreTests {
    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "soundscaped-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func firstStartHasNoSavedState() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        #expect(try store.load() == nil)
        #expect(store.notices.isEmpty)
    }

    @Test func savedStateSurvivesReopening() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saved = PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true)
        do {
            let store = try StateStore(directory: directory)
            try store.save(PersistedState(volume: 80, soundscape: "wind", wantsPlaying: false))
            try store.save(saved)
        }
        let reopened = try StateStore(directory: directory)
        #expect(try reopened.load() == saved)
    }

    /// Layers and the mix's name survive; `soundscape` is written as the first layer's id
    /// (what an older build plays), and a state without layers clears them.
    @Test func layersSurviveReopeningWithTheFirstAsTheSoundscape() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let layers = [PersistedLayer(soundscape: "rain", level: 80), PersistedLayer(soundscape: "wind", level: 0)]
        let store = try StateStore(directory: directory)
        try store.save(PersistedState(volume: 37, soundscape: "fire", wantsPlaying: true, layers: layers, mixName: "night"))
        let expected = PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true, layers: layers, mixName: "night")
        #expect(try StateStore(directory: directory).load() == expected)

        try store.save(PersistedState(volume: 37, soundscape: "wind", wantsPlaying: true, mixName: "night"))
        #expect(try StateStore(directory: directory).load() == PersistedState(volume: 37, soundscape: "wind", wantsPlaying: true))
    }

    @Test func aLayerLevelBeyond100IsRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let saved = PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true)
        try store.save(saved)
        for level in [101, -1] {
            #expect(throws: StoreError.self) {
                try store.save(
                    PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true, layers: [.init(soundscape: "rain", level: level)]))
            }
        }
        #expect(try store.load() == saved)
    }

    @Test func mixesAreSavedReplacedListedByNameAndDeleted() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let night = SavedMix(name: "night", layers: [.init(soundscape: "rain", level: 80), .init(soundscape: "wind", level: 20)])
        let beach = SavedMix(name: "beach", layers: [.init(soundscape: "waves", level: 100)])
        do {
            let store = try StateStore(directory: directory)
            #expect(try store.loadMixes() == [])
            try store.save(SavedMix(name: "night", layers: [.init(soundscape: "fire", level: 5)]))
            try store.save(beach)
            try store.save(night)
        }
        let store = try StateStore(directory: directory)
        #expect(try store.loadMixes() == [beach, night])
        #expect(try store.deleteMix(named: "beach"))
        #expect(try !store.deleteMix(named: "beach"))
        #expect(try !store.deleteMix(named: "never saved"))
        #expect(try StateStore(directory: directory).loadMixes() == [night])
    }

    /// What `loadMixes` could not read back is never written.
    @Test(arguments: [
        SavedMix(name: "", layers: [.init(soundscape: "rain", level: 50)]),
        SavedMix(name: "empty", layers: []),
        SavedMix(name: "loud", layers: [.init(soundscape: "rain", level: 50), .init(soundscape: "wind", level: 101)]),
        SavedMix(name: "unnamed layer", layers: [.init(soundscape: "", level: 50)]),
    ])
    func aMixThatCannotBeReadBackIsRefused(_ mix: SavedMix) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        #expect(throws: StoreError.self) { try store.save(mix) }
        #expect(try store.loadMixes() == [])
    }

    /// The writes are compiled once and kept: each call must bind every value
    /// afresh (a NULL after a text), and a failed write must leave the
    /// statement ready for the next one.
    @Test func keptWriteStatementsRebindEveryValueAndRecoverFromAFailure() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        try store.save(PersistedState(volume: 60, soundscape: "rain", wantsPlaying: true))
        try store.save(PersistedState(volume: 20, soundscape: nil, wantsPlaying: false))
        #expect(try store.load() == PersistedState(volume: 20, soundscape: nil, wantsPlaying: false))
        #expect(throws: StoreError.self) {
            try store.save(PersistedState(volume: 101, soundscape: "wind", wantsPlaying: true))
        }
        try store.save(PersistedState(volume: 70, soundscape: "wind", wantsPlaying: true))
        try store.checkWritable()
        try store.checkWritable()
        #expect(try StateStore(directory: directory).load() == PersistedState(volume: 70, soundscape: "wind", wantsPlaying: true))
    }

    @Test func usesWriteAheadLogging() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        try store.save(PersistedState(volume: 50, soundscape: nil, wantsPlaying: false))
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
    }

    @Test func outOfRangeVolumeIsRefusedByTheSchema() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        #expect(throws: StoreError.self) {
            try store.save(PersistedState(volume: 101, soundscape: nil, wantsPlaying: false))
        }
        #expect(try store.load() == nil)
    }

    @Test func unreadableDatabaseIsMovedAsideNotFatal() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))

        let store = try StateStore(directory: directory)
        #expect(try store.load() == nil)
        #expect(store.notices.count == 1)
        let moved = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".damaged-") }
        #expect(moved.count == 1, "the damaged file is kept for inspection, not deleted")
        #expect(store.movedAside == directory + "/" + moved[0])
        try store.save(PersistedState(volume: 10, soundscape: "rain", wantsPlaying: true))
        #expect(try store.load()?.volume == 10)
    }

    @Test func writableCheckPassesOnAHealthyStore() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        try store.checkWritable()
    }

    @Test func preferencesSurviveReopening() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saved = Preferences(
            interruptionMode: .duck, duckLevel: 25, autoResume: false, pinnedSink: "headset",
            keepAwake: true, notifications: false, signerDownSound: .silence)
        do {
            let store = try StateStore(directory: directory)
            #expect(try store.loadPreferences() == nil)
            try store.save(Preferences.default)
            try store.save(saved)
        }
        #expect(try StateStore(directory: directory).loadPreferences() == saved)
    }

    /// A v3 database (before keep-awake and notifications) keeps its preferences and gets the defaults.
    @Test func preferencesFromBeforeTheDesktopColumnsTakeTheirDefaults() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let old = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
            for migration in StateStore.migrations.prefix(3) {
                for statement in migration.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
                    _ = try old.execute(String(statement))
                }
            }
            _ = try old.execute("PRAGMA user_version = 3")
            _ = try old.execute("INSERT INTO preferences VALUES (1, 'duck', 20, 0, NULL, 0)")
        }
        let store = try StateStore(directory: directory)
        #expect(
            try store.loadPreferences()
                == Preferences(
                    interruptionMode: .duck, duckLevel: 20, autoResume: false,
                    pinnedSink: nil, keepAwake: false, notifications: true,
                    signerDownSound: .cue))
    }

    /// Databases written by the GRDB-based builds kept their schema version in
    /// GRDB's own table, not in `user_version`; they must open with their rows intact.
    @Test func databaseFromAnEarlierBuildIsAdoptedWithItsRows() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let old = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
            _ = try old.execute("PRAGMA journal_mode = WAL")
            _ = try old.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            _ = try old.execute("INSERT INTO grdb_migrations VALUES ('v1')")
            _ = try old.execute(
                """
                CREATE TABLE player_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    volume INTEGER NOT NULL CHECK (volume >= 0 AND volume <= 100),
                    soundscape TEXT, wants_playing BOOLEAN NOT NULL, updated_at NOT NULL)
                """)
            _ = try old.execute("INSERT INTO player_state VALUES (1, 42, 'wind', 1, 0)")
        }
        let store = try StateStore(directory: directory)
        #expect(try store.load() == PersistedState(volume: 42, soundscape: "wind", wantsPlaying: true))
        #expect(store.notices.isEmpty)
        try store.save(Preferences(interruptionMode: .ignore, duckLevel: 10, autoResume: true, pinnedSink: nil))
        #expect(try store.loadPreferences()?.interruptionMode == .ignore, "later migrations ran on the adopted file")
    }

    // MARK: Never drop good data

    /// A database with a page damaged far from its header: it opens, but
    /// `quick_check` proves the damage at open. The rows that still read are kept.
    @Test func aPageDamagedDeepInTheFileIsFoundAtOpenAndTheGoodRowsAreKept() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        let state = PersistedState(
            volume: 33, soundscape: "wind", wantsPlaying: true, paused: true,
            layers: [.init(soundscape: "wind", level: 70), .init(soundscape: "rain", level: 30)], mixName: "night")
        let preferences = Preferences(interruptionMode: .duck, duckLevel: 12, autoResume: false, pinnedSink: "usb")
        let mixes = [
            SavedMix(name: "beach", layers: [.init(soundscape: "waves", level: 90)]),
            SavedMix(name: "night", layers: [.init(soundscape: "wind", level: 70), .init(soundscape: "rain", level: 30)]),
        ]
        do {
            let store = try StateStore(directory: directory)
            try store.save(state)
            try store.save(preferences)
            for mix in mixes { try store.save(mix) }
            // Something else in the file, taking pages after ours (as an older build's table might).
            let filler = try SQLiteConnection(path: path)
            try filler.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB)")
            for index in 0..<64 { try filler.execute("INSERT INTO filler VALUES (?, zeroblob(4000))", [.integer(Int64(index))]) }
            try filler.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        // Damage one page two thirds into the file: the b-tree page header of a filler page.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        let page = (size / 4096) * 2 / 3
        try handle.seek(toOffset: page * 4096)
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 64))
        try handle.close()

        let store = try StateStore(directory: directory)
        let aside = try #require(store.movedAside, "a damaged page was not noticed")
        #expect(FileManager.default.fileExists(atPath: aside))
        #expect(try store.load() == state, "the state row could still be read: it must be kept")
        #expect(try store.loadPreferences() == preferences)
        #expect(try store.loadMixes() == mixes)
        #expect(
            store.notices.first?.contains("the saved state, the preferences and the saved mixes could still be read and were kept") == true,
            "\(store.notices)")
        #expect(store.mode == .readWrite)
        try store.checkWritable()
    }

    /// Another process holding the write lock is no proof of damage: the file
    /// stays, the saved state reads, writes fail while the lock is held and go
    /// through once it is released.
    @Test func aHeldWriteLockNeverMovesTheDatabaseAside() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saved = PersistedState(volume: 61, soundscape: "rain", wantsPlaying: true)
        try StateStore(directory: directory).save(saved)

        let holder = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
        try holder.execute("BEGIN IMMEDIATE")
        let store = try StateStore(directory: directory)
        #expect(store.movedAside == nil)
        #expect(store.notices.isEmpty || store.mode != .readWrite, "\(store.notices)")
        #expect(try store.load() == saved)
        #expect(throws: StoreError.self) { try store.save(PersistedState(volume: 62, soundscape: "rain", wantsPlaying: true)) }
        try holder.execute("COMMIT")
        try store.save(PersistedState(volume: 63, soundscape: "rain", wantsPlaying: true))
        #expect(try StateStore(directory: directory).load()?.volume == 63)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!files.contains { $0.contains("damaged") }, "\(files)")
    }
}
