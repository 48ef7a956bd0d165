import Foundation
import SoundscapeCore
import Testing
@testable import SoundscapeStore

/// `state.sqlite` files as every schema version left them (Fixtures/README.md says how each
/// was made): each opens, migrates and reads back every value it held; what a newer build
/// leaves in a file and what an older one does to it.
@Suite struct StateStoreFixtureTests {
    /// One fixture and what it holds: the fields its version did not have take their defaults.
    struct Fixture: Sendable, CustomTestStringConvertible {
        let name: String
        let userVersion: Int
        let state: PersistedState
        let preferences: Preferences?
        var mixes: [SavedMix] = []
        var testDescription: String { name }
    }

    /// The state before v7: one soundscape.
    static let state = PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true, paused: true)
    /// The v7 fixture's: two layers of a saved mix.
    static let layered = PersistedState(
        volume: 37, soundscape: "rain", wantsPlaying: true, paused: true,
        layers: [PersistedLayer(soundscape: "rain", level: 80), PersistedLayer(soundscape: "wind", level: 35)],
        mixName: "stormy night")
    /// The v7 fixture's mixes, sorted by name (it saved them the other way round).
    static let mixes = [
        SavedMix(
            name: "campfire",
            layers: [
                PersistedLayer(soundscape: "fire", level: 60), PersistedLayer(soundscape: "crickets", level: 25),
                PersistedLayer(soundscape: "wind", level: 0),
            ]),
        SavedMix(name: "stormy night", layers: layered.layers),
    ]
    /// Every preference away from its default, as the v6 fixture holds them.
    static let preferences = Preferences(
        interruptionMode: .duck, duckLevel: 12, autoResume: false, pinnedSink: "alsa_output.usb-headset",
        keepAwake: true, notifications: false, signerDownSound: .silence)

    static let fixtures: [Fixture] = {
        var notPaused = state
        notPaused.paused = false
        var v2 = preferences
        (v2.keepAwake, v2.notifications, v2.signerDownSound) = (false, true, .cue)
        var v4 = preferences
        v4.signerDownSound = .cue
        return [
            Fixture(name: "grdb-v1", userVersion: 0, state: notPaused, preferences: nil),
            Fixture(name: "grdb-v2", userVersion: 0, state: notPaused, preferences: v2),
            Fixture(name: "v2", userVersion: 2, state: notPaused, preferences: v2),
            Fixture(name: "v3", userVersion: 3, state: state, preferences: v2),
            Fixture(name: "v4", userVersion: 4, state: state, preferences: v4),
            Fixture(name: "v5", userVersion: 5, state: state, preferences: v4.with(\.signerDownSound, .silence)),
            Fixture(name: "v6", userVersion: 6, state: state, preferences: preferences),
            Fixture(name: "v7", userVersion: 7, state: layered, preferences: preferences, mixes: mixes),
        ]
    }()

    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A copy of the fixture as `state.sqlite` in a directory of its own; returns the directory.
    private func copy(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "soundscaped-fixture-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.directory.appendingPathComponent("\(name).sqlite").path, toPath: directory + "/" + StateStore.fileName)
        return directory
    }

    private func userVersion(_ connection: SQLiteConnection) throws -> Int64? {
        try connection.execute("PRAGMA user_version").first?["user_version"]?.integer
    }

    @Test func everySchemaVersionHasAFixture() {
        #expect(Self.fixtures.last?.userVersion == StateStore.migrations.count, "add a fixture for the new schema version")
    }

    @Test(arguments: fixtures)
    func opensMigratesAndReadsEveryValue(_ fixture: Fixture) throws {
        let directory = try copy(fixture.name)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        #expect(try userVersion(SQLiteConnection(path: path, readOnly: true)) == Int64(fixture.userVersion))

        let store = try StateStore(directory: directory)
        #expect(store.notices.isEmpty && store.movedAside == nil && store.mode == .readWrite, "\(store.notices)")
        #expect(try store.load() == fixture.state)
        #expect(try store.loadPreferences() == fixture.preferences)
        #expect(try store.loadMixes() == fixture.mixes)
        #expect(try userVersion(SQLiteConnection(path: path, readOnly: true)) == Int64(StateStore.migrations.count))

        // The migrated file takes this build's writes; opened again (nothing left to migrate), it reads them.
        let changed = (fixture.preferences ?? .default).with(\.duckLevel, 77)
        let layers = [PersistedLayer(soundscape: "wind", level: 90), PersistedLayer(soundscape: "waves", level: 15)]
        let state = PersistedState(volume: 38, soundscape: "wind", wantsPlaying: false, layers: layers, mixName: "shore")
        try store.save(changed)
        try store.save(state)
        try store.save(SavedMix(name: "shore", layers: layers))
        try store.checkWritable()
        let reopened = try StateStore(directory: directory)
        #expect(try reopened.loadPreferences() == changed)
        #expect(try reopened.load() == state)
        #expect(try reopened.loadMixes() == (fixture.mixes + [SavedMix(name: "shore", layers: layers)]).sorted { $0.name < $1.name })
    }

    /// The v7 fixture holds its layers as this build writes them.
    @Test func theNewestFixtureHoldsLayersAsTheStoreWritesThem() throws {
        // Immutable: a read-only connection may leave -wal and -shm files beside the fixture.
        let connection = try SQLiteConnection(
            path: "file:\(Self.directory.appendingPathComponent("v7.sqlite").path)?immutable=1", readOnly: true)
        let row = try #require(try connection.execute("SELECT layers, mix_name FROM player_state").first)
        #expect(row["layers"]?.text == LayersColumn.text(Self.layered.layers))
        #expect(row["mix_name"]?.text == Self.layered.mixName)
        let mixes = try connection.execute("SELECT name, layers FROM saved_mixes ORDER BY name")
        #expect(mixes.map { $0["layers"]?.text } == Self.mixes.map { LayersColumn.text($0.layers) })
    }

    /// A store that cannot write opens the file read-only and never migrates it: every
    /// version must read as it is, and reading changes none of its bytes.
    @Test(arguments: fixtures)
    func readsEveryValueUnmigrated(_ fixture: Fixture) throws {
        let directory = try copy(fixture.name)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            #expect(try StateStore.readState(connection) == fixture.state)
            #expect(try StateStore.readPreferences(connection) == fixture.preferences)
            #expect(try StateStore.readMixes(connection) == fixture.mixes)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// v6 is idempotent: run again over itself (as if its `user_version` had not been
    /// recorded), it changes nothing.
    @Test func schemaV6RunsAgainOverItself() throws {
        let directory = try copy("v6")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try SQLiteConnection(path: directory + "/" + StateStore.fileName).execute("PRAGMA user_version = 5")
        let store = try StateStore(directory: directory)
        #expect(store.notices.isEmpty)
        #expect(try store.loadPreferences() == Self.preferences)
        #expect(try userVersion(SQLiteConnection(path: store.path, readOnly: true)) == Int64(StateStore.migrations.count))
    }

    /// A stored value `Preferences.set` refuses leaves that preference at its default, in
    /// either table, and the others keep their values.
    @Test func anInvalidStoredValueTakesItsDefault() throws {
        for (fixture, table) in [("v5", "preferences"), ("v6", "preference_values")] {
            let directory = try copy(fixture)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let connection = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
            if table == "preferences" {
                try connection.execute("UPDATE preferences SET interruption_mode = 'louder', signer_down_sound = 'chime'")
            } else {
                try connection.execute("UPDATE preference_values SET value = 'louder' WHERE name = 'interruption-mode'")
                try connection.execute("UPDATE preference_values SET value = 'chime' WHERE name = 'signer-down-sound'")
            }
            let expected = Self.preferences.with(\.interruptionMode, .pause).with(\.signerDownSound, .cue)
            #expect(try StateStore(directory: directory).loadPreferences() == expected, "\(table)")
        }
    }

    /// A file from a newer build (its `user_version` beyond this build's migrations) is used
    /// as it is: nothing is migrated and `user_version` stays; opening and reading it write
    /// nothing to it; the values this build knows are read, and written without touching the
    /// tables, columns and preferences it does not know.
    @Test func aNewerFileIsUsedAsItIsAndKeepsWhatThisBuildDoesNotKnow() throws {
        let directory = try copy("v7")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        do {
            let future = try SQLiteConnection(path: path)
            try future.execute("CREATE TABLE future_things (id INTEGER PRIMARY KEY, what TEXT NOT NULL)")
            try future.execute("INSERT INTO future_things VALUES (1, 'kept')")
            try future.execute("ALTER TABLE player_state ADD COLUMN future_column TEXT NOT NULL DEFAULT 'kept'")
            try future.execute("INSERT INTO preference_values VALUES ('future-preference', 'kept', 0)")
            try future.execute("ALTER TABLE saved_mixes ADD COLUMN future_column TEXT NOT NULL DEFAULT 'kept'")
            try future.execute("PRAGMA user_version = 99")
            try future.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let store = try StateStore(directory: directory)
            #expect(store.notices.isEmpty && store.mode == .readWrite, "\(store.notices)")
            #expect(try store.load() == Self.layered)
            #expect(try store.loadPreferences() == Self.preferences)
            #expect(try store.loadMixes() == Self.mixes)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "opening and reading wrote to the file")

        let store = try StateStore(directory: directory)
        try store.save(PersistedState(volume: 61, soundscape: "wind", wantsPlaying: false))
        try store.save(Self.preferences.with(\.duckLevel, 61))
        try store.save(SavedMix(name: "stormy night", layers: [PersistedLayer(soundscape: "rain", level: 61)]))
        #expect(try store.deleteMix(named: "campfire"))
        let raw = try SQLiteConnection(path: path, readOnly: true)
        #expect(try userVersion(raw) == 99)
        #expect(try raw.execute("SELECT what FROM future_things").first?["what"]?.text == "kept")
        #expect(try raw.execute("SELECT future_column FROM player_state").first?["future_column"]?.text == "kept")
        #expect(try raw.execute("SELECT future_column FROM saved_mixes").first?["future_column"]?.text == "kept")
        #expect(
            try raw.execute("SELECT value FROM preference_values WHERE name = 'future-preference'").first?["value"]?.text == "kept")
        #expect(try StateStore.readPreferences(raw) == Self.preferences.with(\.duckLevel, 61))
        #expect(try StateStore.readState(raw) == PersistedState(volume: 61, soundscape: "wind", wantsPlaying: false))
        #expect(try StateStore.readMixes(raw) == [SavedMix(name: "stormy night", layers: [PersistedLayer(soundscape: "rain", level: 61)])])
    }

    /// A v6 build opening a file this build migrated to v7 (or made): it runs no migration,
    /// plays the first layer alone (`soundscape`), and writes the state row with its own
    /// statement (as the v6 builds wrote it), which leaves `layers` and `mix_name` as they
    /// were. Back on this build, the layers read only while their first is still the
    /// soundscape: a volume change keeps the mix, another soundscape ends it. The saved
    /// mixes are a table the older build never touches.
    @Test func anOlderBuildsWritesKeepTheLayersOnlyWhileItPlaysTheFirst() throws {
        let directory = try copy("v7")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        let olderWrite = { (volume: Int64, soundscape: String) in
            _ = try SQLiteConnection(path: path).execute(
                """
                INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, updated_at)
                VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
                    wants_playing = excluded.wants_playing, paused = excluded.paused, updated_at = excluded.updated_at
                """, [.integer(volume), .text(soundscape), .integer(1), .integer(0), .real(1)])
        }
        #expect(try StateStore.readState(SQLiteConnection(path: path, readOnly: true))?.soundscape == "rain")

        try olderWrite(52, "rain")
        var expected = Self.layered
        (expected.volume, expected.paused) = (52, false)
        #expect(try StateStore(directory: directory).load() == expected)

        try olderWrite(53, "fire")
        #expect(try StateStore(directory: directory).load() == PersistedState(volume: 53, soundscape: "fire", wantsPlaying: true))
        #expect(try StateStore(directory: directory).loadMixes() == Self.mixes)
    }

    /// A `layers` value this build cannot read, written by hand or by a newer build, reads
    /// as none: `soundscape` plays alone, the rest of the state is kept, and the load never
    /// fails. A saved mix whose layers cannot be read is left out; the others are listed,
    /// and it can still be replaced and deleted by name.
    @Test(arguments: [
        "not json", "", "{}", "null", "[]", "[1, 2]", #"[{"soundscape":"rain"}]"#, #"[{"soundscape":"rain","level":"80"}]"#,
        #"[{"soundscape":"rain","level":101}]"#, #"[{"soundscape":"rain","level":-1}]"#, #"[{"soundscape":"","level":5}]"#,
        #"[{"soundscape":"rain","level":80.5}]"#,
    ])
    func malformedLayersReadAsNone(_ value: String) throws {
        let directory = try copy("v7")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let connection = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
            try connection.execute("UPDATE player_state SET layers = ?", [.text(value)])
            try connection.execute("UPDATE saved_mixes SET layers = ? WHERE name = 'campfire'", [.text(value)])
        }
        let store = try StateStore(directory: directory)
        #expect(store.notices.isEmpty, "\(store.notices)")
        #expect(try store.load() == Self.state)
        #expect(try store.loadMixes() == [Self.mixes[1]])
        #expect(try store.deleteMix(named: "campfire"))
        #expect(try store.loadMixes() == [Self.mixes[1]])
    }

    /// An older build's file opened read-only (here: another process holds the write lock,
    /// so the migration to v7 cannot run) has no saved mixes and no layers, and says so
    /// without an error; the first write once the lock is gone migrates it.
    @Test func aFileThatCannotBeMigratedYetReadsWithoutMixes() throws {
        let directory = try copy("v6")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let holder = try SQLiteConnection(path: directory + "/" + StateStore.fileName)
        try holder.execute("BEGIN IMMEDIATE")
        let store = try StateStore(directory: directory)
        guard case .readOnly = store.mode else {
            Issue.record("opened \(store.mode) while another process held the write lock")
            return
        }
        #expect(try store.load() == Self.state)
        #expect(try store.loadMixes() == [])
        #expect(throws: StoreError.self) { try store.save(Self.mixes[0]) }
        try holder.execute("COMMIT")
        try store.save(Self.mixes[0])
        #expect(store.mode == .readWrite)
        #expect(try store.loadMixes() == [Self.mixes[0]])
        #expect(try userVersion(SQLiteConnection(path: store.path, readOnly: true)) == Int64(StateStore.migrations.count))
    }

    /// The other way round: a v5 build opening a file this build migrated. It runs no
    /// migration (6 and on are beyond its own), reads its `preferences` row, which this build left as
    /// it was, and writes with its own statements (as d7bccb8 wrote them), which go through.
    /// The file stays this build's: its preferences are in `preference_values`, which the
    /// older build never touched; the state row is shared, so the older build's state is read.
    @Test func anOlderBuildOpeningAMigratedFileFindsItsRowsAndDamagesNothing() throws {
        let directory = try copy("v5")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        let newer = Self.preferences.with(\.duckLevel, 64).with(\.signerDownSound, .keep)
        try StateStore(directory: directory).save(newer)

        let older = try SQLiteConnection(path: path)
        #expect(try userVersion(older) == Int64(StateStore.migrations.count))
        let row = try #require(try older.execute("SELECT * FROM preferences WHERE id = 1").first)
        #expect(row["duck_level"]?.integer == 12 && row["signer_down_sound"]?.text == "silence", "the v5 row as the v5 build left it")
        try older.execute(
            """
            INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, updated_at)
            VALUES (1, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
                wants_playing = excluded.wants_playing, paused = excluded.paused, updated_at = excluded.updated_at
            """, [.integer(21), .text("wind"), .integer(0), .integer(0), .real(1)])
        try older.execute(
            """
            INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink,
                keep_awake, notifications, signer_down_sound, updated_at)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
                duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
                pinned_sink = excluded.pinned_sink, keep_awake = excluded.keep_awake,
                notifications = excluded.notifications, signer_down_sound = excluded.signer_down_sound,
                updated_at = excluded.updated_at
            """, [.text("ignore"), .integer(5), .integer(1), .null, .integer(0), .integer(1), .text("cue"), .real(1)])
        #expect(try userVersion(older) == Int64(StateStore.migrations.count))
        #expect(try older.execute("PRAGMA quick_check").first?["quick_check"]?.text == "ok")

        let store = try StateStore(directory: directory)
        #expect(store.notices.isEmpty)
        #expect(try store.load() == PersistedState(volume: 21, soundscape: "wind", wantsPlaying: false))
        #expect(try store.loadPreferences() == newer)
    }
}

extension Preferences {
    /// A copy with one value changed.
    fileprivate func with<Value>(_ keyPath: WritableKeyPath<Preferences, Value>, _ value: Value) -> Preferences {
        var copy = self
        copy[keyPath: keyPath] = value
        return copy
    }
}
