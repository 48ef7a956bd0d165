import CSQLite
import Glibc
import SoundscapeCore
import SoundscapeSystem
import Synchronization

public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// The daemon's SQLite database (WAL, migrations) in `$XDG_STATE_HOME/soundscaped`.
///
/// It never drops good data:
/// - A database is moved aside only when SQLite proves it damaged (`SQLITE_CORRUPT`
///   or `SQLITE_NOTADB`, or a failing `quick_check`), never because it is busy,
///   read-only, cannot be opened or the disk is full. What can still be read of
///   it (the state and preferences rows, the saved mixes) is carried into the fresh database.
/// - A database that cannot be written (a read-only directory or file system, a
///   full disk at start) is opened read-only: the saved state is still loaded and
///   played as the user wanted, and the store reports itself not writable.
///   Every later write first tries to open it for writing again.
/// - A write that fails throws; the caller keeps the change and writes it again
///   (see the daemon's `StateKeeper`).
public final class StateStore: Sendable {
    public static let fileName = "state.sqlite"

    /// How the database is open.
    public enum Mode: Sendable, Equatable {
        case readWrite
        /// Read-only, with why writing is not possible.
        case readOnly(reason: String)
    }

    public let path: String
    /// Things worth telling the user once, such as a damaged file moved aside.
    public let notices: [String]
    /// Where a damaged database was moved at open, if one was.
    public let movedAside: String?
    /// The one connection and how it is open. The lock serialises every use of
    /// it (the daemon's database thread is the only caller, but the store does
    /// not rely on that).
    private struct Open {
        var connection: SQLiteConnection
        var mode: Mode
    }

    private let open: Mutex<Open>

    public var mode: Mode { open.withLock { $0.mode } }

    public init(directory: String) throws(StoreError) {
        let path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        self.path = path
        if let problem = Directories.make(directory, mode: 0o700), !FileSystem.exists(path) {
            throw StoreError(description: "cannot create the state directory \(directory): \(problem)")
        }
        var notices: [String] = []
        var movedAside: String?
        let connection: SQLiteConnection
        let openMode: Mode
        do {
            connection = try Self.openForWriting(path: path)
            openMode = .readWrite
        } catch let error where error.provesDamage {
            let salvaged = Self.salvage(path: path)
            let aside = path + ".damaged-\(Int(Self.unixSeconds()))"
            guard rename(path, aside) == 0 else {
                let reason = String(cString: strerror(errno))
                throw StoreError(description: "the state database \(path) is damaged (\(error)) and cannot be moved aside: \(reason)")
            }
            for suffix in ["-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            movedAside = aside
            do {
                connection = try Self.openForWriting(path: path)
                openMode = .readWrite
            } catch {
                throw StoreError(description: "cannot make a new state database \(path): \(error)")
            }
            if let state = salvaged.state { try? Self.write(state, to: connection) }
            if let preferences = salvaged.preferences { try? Self.write(preferences, to: connection) }
            for mix in salvaged.mixes { try? Self.write(mix, to: connection) }
            let kept = [
                salvaged.state.map { _ in "the saved state" }, salvaged.preferences.map { _ in "the preferences" },
                salvaged.mixes.isEmpty ? nil : "the saved mixes",
            ].compactMap { $0 }
            let keptList = kept.count < 2 ? kept.joined() : kept.dropLast().joined(separator: ", ") + " and " + (kept.last ?? "")
            notices.append(
                "the state database was damaged (\(error)); moved it to \(aside)"
                    + (kept.isEmpty ? " and started afresh" : "; \(keptList) could still be read and were kept"))
        } catch {
            // Busy, read-only, no space, cannot open for writing: no proof of damage. Read what is there.
            guard FileSystem.exists(path) else {
                throw StoreError(description: "cannot open the state database \(path): \(error)")
            }
            do {
                connection = try Self.openForReading(path: path)
            } catch let readError {
                throw StoreError(description: "cannot open the state database \(path): \(error); read-only: \(readError)")
            }
            let reason = Self.whyNotWritable(path) ?? "\(error)"
            openMode = .readOnly(reason: reason)
            notices.append(
                "the state database cannot be written (\(reason)); the saved state is used, and changes are kept in memory until it can be")
        }
        open = Mutex(Open(connection: connection, mode: openMode))
        self.notices = notices
        self.movedAside = movedAside
    }

    /// Opens for writing, switches to WAL, proves the file sound and brings the
    /// schema up to date.
    private static func openForWriting(path: String) throws(SQLiteError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
        // A handful of rows: a 64 KiB page cache instead of the default 2 MB keeps resident memory down.
        try connection.execute("PRAGMA cache_size = -64")
        try checkIntegrity(connection)
        try migrate(connection)
        for statement in [saveStateSQL, savePreferencesSQL, checkWritableSQL, saveMixSQL, deleteMixSQL, changesSQL] {
            try connection.prepare(kept: statement)
        }
        return connection
    }

    /// Read-only: through the WAL when SQLite can use it, else as an immutable
    /// file (a read-only medium without the WAL's index file).
    private static func openForReading(path: String) throws(SQLiteError) -> SQLiteConnection {
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            try connection.execute("PRAGMA user_version")
            return connection
        } catch {
            let connection = try SQLiteConnection(path: "file:\(path)?immutable=1", readOnly: true)
            try connection.execute("PRAGMA user_version")
            return connection
        }
    }

    /// `quick_check` reads every page: a page damaged deep in the file fails here
    /// at open, not at the first write days later.
    private static func checkIntegrity(_ connection: SQLiteConnection) throws(SQLiteError) {
        let rows = try connection.execute("PRAGMA quick_check")
        let verdict = rows.compactMap { $0.values.first?.text }
        guard verdict == ["ok"] else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "quick_check: \(verdict.prefix(3).joined(separator: "; "))")
        }
    }

    /// What can still be read of a damaged database, table by table.
    private static func salvage(path: String) -> (state: PersistedState?, preferences: Preferences?, mixes: [SavedMix]) {
        guard let connection = try? openForReading(path: path) else { return (nil, nil, []) }
        let state = try? readState(connection)
        let preferences = try? readPreferences(connection)
        let mixes = try? readMixes(connection)
        return (state ?? nil, preferences ?? nil, mixes ?? [])
    }

    /// Writing needs a read-write connection: a store opened read-only tries to
    /// open one again first (the disk may take writes again), and keeps it.
    private static func writable(_ open: inout Open, path: String) throws(SQLiteError) -> SQLiteConnection {
        guard case .readOnly = open.mode else { return open.connection }
        do {
            let upgraded = try Self.openForWriting(path: path)
            open = Open(connection: upgraded, mode: .readWrite)
            return upgraded
        } catch {
            throw SQLiteError(code: error.code, message: "\(Self.whyNotWritable(path) ?? error.message) (open read-only)")
        }
    }

    /// What the file system says about writing beside `path`: SQLite's "unable to
    /// open database file" does not tell a read-only mount from a full disk.
    static func whyNotWritable(_ path: String) -> String? {
        let directory = FilePaths.parent(path)
        if access(directory, W_OK) != 0 { return "\(directory): \(String(cString: strerror(errno)))" }
        if FileSystem.exists(path), access(path, W_OK) != 0 { return "\(path): \(String(cString: strerror(errno)))" }
        var info = statvfs()
        if statvfs(directory, &info) == 0, info.f_bavail == 0 { return "\(directory): no space left on the device" }
        return nil
    }

    /// Schema versions, applied in order and recorded in `user_version`. Each either
    /// creates what is missing (`IF NOT EXISTS`), so a database made by an earlier build
    /// that kept its own migration table is adopted as it is, or adds a column that no
    /// earlier build had, guarded by `user_version` alone.
    ///
    /// A file whose `user_version` is beyond these (written by a newer build) is used as
    /// it is: nothing here runs, `user_version` stays, and the rows are read with
    /// `SELECT *` and written by column name, so tables and columns this build does not
    /// know are left alone. That holds as long as every version only adds: a table, or
    /// a column with a default (an older build's writes must still go through), never
    /// dropping or renaming what an older build reads or writes.
    static let migrations: [String] = [
        // v1: player state, and a row the health probe rewrites so "writable" is proven by a real write.
        """
        CREATE TABLE IF NOT EXISTS player_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            volume INTEGER NOT NULL CHECK (volume >= 0 AND volume <= 100),
            soundscape TEXT,
            wants_playing BOOLEAN NOT NULL,
            updated_at NOT NULL);
        CREATE TABLE IF NOT EXISTS health_probe (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            checked_at NOT NULL);
        """,
        // v2: preferences.
        """
        CREATE TABLE IF NOT EXISTS preferences (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            interruption_mode TEXT NOT NULL,
            duck_level INTEGER NOT NULL CHECK (duck_level >= 0 AND duck_level <= 100),
            auto_resume BOOLEAN NOT NULL,
            pinned_sink TEXT,
            updated_at NOT NULL);
        """,
        // v3: a paused session (the keep-alive goes on without sound). No earlier build had this
        // column, so `user_version` alone guards it; ALTER TABLE has no IF NOT EXISTS.
        """
        ALTER TABLE player_state ADD COLUMN paused BOOLEAN NOT NULL DEFAULT 0;
        """,
        // v4: the desktop preferences (hold a sleep inhibitor; desktop notifications).
        """
        ALTER TABLE preferences ADD COLUMN keep_awake BOOLEAN NOT NULL DEFAULT 0;
        ALTER TABLE preferences ADD COLUMN notifications BOOLEAN NOT NULL DEFAULT 1;
        """,
        // v5: what plays while the signer is down (cue, silence or keep).
        """
        ALTER TABLE preferences ADD COLUMN signer_down_sound TEXT NOT NULL DEFAULT 'cue';
        """,
        // v6: preferences by name, a row each, as `Preferences` spells them (`names`,
        // `value(named:)`), so a new preference needs no new column. The v2-v5 row in
        // `preferences` stays: it is read under these rows and never written again. An
        // older build opening the file finds that row as it left it (none in a file this
        // build created: it then runs with its default preferences), and its changes to it
        // are not read back here for names that have a row of their own.
        """
        CREATE TABLE IF NOT EXISTS preference_values (
            name TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL,
            updated_at NOT NULL);
        """,
        // v7: layers (several soundscapes at once, each at a level) and saved mixes. The
        // layers are JSON (`LayersColumn`), NULL when `soundscape` plays alone; `soundscape`
        // is still written, the first layer's id, so an older build plays that one alone.
        // An older build's writes leave `layers` as they were: they are read only while
        // their first is still `soundscape` (`readState`). No earlier build had these
        // columns or this table, so `user_version` alone guards them.
        """
        ALTER TABLE player_state ADD COLUMN layers TEXT;
        ALTER TABLE player_state ADD COLUMN mix_name TEXT;
        CREATE TABLE IF NOT EXISTS saved_mixes (
            name TEXT PRIMARY KEY NOT NULL,
            layers TEXT NOT NULL,
            updated_at REAL NOT NULL);
        """,
    ]

    /// The writes the daemon makes while it runs, compiled once at open (`SQLiteConnection.prepare(kept:)`).
    static let saveStateSQL = """
        INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, layers, mix_name, updated_at)
        VALUES (1, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
            wants_playing = excluded.wants_playing, paused = excluded.paused, layers = excluded.layers,
            mix_name = excluded.mix_name, updated_at = excluded.updated_at
        """
    /// Every preference in one statement (so all or none are written); names this build
    /// does not know (a newer build's) keep their rows.
    static let savePreferencesSQL = """
        INSERT INTO preference_values (name, value, updated_at)
        VALUES \(Preferences.names.map { _ in "(?, ?, ?)" }.joined(separator: ", "))
        ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
        """
    static let checkWritableSQL = "INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, ?)"
    static let saveMixSQL = """
        INSERT INTO saved_mixes (name, layers, updated_at) VALUES (?, ?, ?)
        ON CONFLICT(name) DO UPDATE SET layers = excluded.layers, updated_at = excluded.updated_at
        """
    static let deleteMixSQL = "DELETE FROM saved_mixes WHERE name = ?"
    /// How many rows the last write changed (whether a delete found its row).
    static let changesSQL = "SELECT changes() AS changes"

    static func migrate(_ connection: SQLiteConnection) throws(SQLiteError) {
        let version = Int(try connection.execute("PRAGMA user_version").first?["user_version"]?.integer ?? 0)
        guard version < migrations.count else { return }
        try connection.transaction { () throws(SQLiteError) in
            for (index, migration) in migrations.enumerated() where index >= version {
                for statement in migration.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
                    try connection.execute(String(statement))
                }
            }
            try connection.execute("PRAGMA user_version = \(migrations.count)")
        }
    }

    /// The saved state, or nil on a first start.
    public func load() throws(StoreError) -> PersistedState? {
        do {
            return try open.withLock { (open: inout Open) throws(SQLiteError) in try Self.readState(open.connection) }
        } catch {
            throw StoreError(description: "cannot read the saved state: \(error)")
        }
    }

    /// Refuses layers `LayersColumn.problem` finds fault with (a level beyond 0–100).
    public func save(_ state: PersistedState) throws(StoreError) {
        if let problem = LayersColumn.problem(state.layers) { throw StoreError(description: "cannot save the state: \(problem)") }
        do {
            try open.withLock { [path] (open: inout Open) throws(SQLiteError) in
                try Self.write(state, to: try Self.writable(&open, path: path))
            }
        } catch {
            throw StoreError(description: "cannot save the state: \(error)")
        }
    }

    /// Saved preferences, or nil when none were ever set.
    public func loadPreferences() throws(StoreError) -> Preferences? {
        do {
            return try open.withLock { (open: inout Open) throws(SQLiteError) in try Self.readPreferences(open.connection) }
        } catch {
            throw StoreError(description: "cannot read the saved preferences: \(error)")
        }
    }

    public func save(_ preferences: Preferences) throws(StoreError) {
        do {
            try open.withLock { [path] (open: inout Open) throws(SQLiteError) in
                try Self.write(preferences, to: try Self.writable(&open, path: path))
            }
        } catch {
            throw StoreError(description: "cannot save the preferences: \(error)")
        }
    }

    /// The saved mixes, sorted by name. One whose layers cannot be read is left out
    /// (`save` and `deleteMix` still reach it by its name).
    public func loadMixes() throws(StoreError) -> [SavedMix] {
        do {
            return try open.withLock { (open: inout Open) throws(SQLiteError) in try Self.readMixes(open.connection) }
        } catch {
            throw StoreError(description: "cannot read the saved mixes: \(error)")
        }
    }

    /// Saves `mix`, replacing one of the same name. Refuses an empty name, no layers,
    /// and layers `LayersColumn.problem` finds fault with.
    public func save(_ mix: SavedMix) throws(StoreError) {
        if let problem = Self.problem(mix) { throw StoreError(description: "cannot save the mix '\(mix.name)': \(problem)") }
        do {
            try open.withLock { [path] (open: inout Open) throws(SQLiteError) in
                try Self.write(mix, to: try Self.writable(&open, path: path))
            }
        } catch {
            throw StoreError(description: "cannot save the mix '\(mix.name)': \(error)")
        }
    }

    /// Deletes the mix called `name`; false when there was none.
    public func deleteMix(named name: String) throws(StoreError) -> Bool {
        do {
            return try open.withLock { [path] (open: inout Open) throws(SQLiteError) in
                // The lock keeps every other write off this connection until `changes()` is read.
                let connection = try Self.writable(&open, path: path)
                try connection.execute(Self.deleteMixSQL, [.text(name)])
                return (try connection.execute(Self.changesSQL).first?["changes"]?.integer ?? 0) > 0
            }
        } catch {
            throw StoreError(description: "cannot delete the mix '\(name)': \(error)")
        }
    }

    /// Proves a write goes through (for the health probe) without changing data.
    public func checkWritable() throws(StoreError) {
        do {
            try open.withLock { [path] (open: inout Open) throws(SQLiteError) in
                _ = try Self.writable(&open, path: path).execute(Self.checkWritableSQL, [.real(Self.unixSeconds())])
            }
        } catch {
            throw StoreError(description: "the state database is not writable: \(error)")
        }
    }

    // MARK: Rows

    /// `SELECT *`, so a database an older build wrote (a read-only one is never
    /// migrated) reads too: a missing column takes its default.
    ///
    /// The layers (v7) are read only while their first is `soundscape`: an older build
    /// that has played another soundscape since wrote `soundscape` and left them as they
    /// were. Layers that cannot be read (`LayersColumn.layers`) read as none, never as an
    /// error: `soundscape` then plays alone.
    static func readState(_ connection: SQLiteConnection) throws(SQLiteError) -> PersistedState? {
        try connection.execute("SELECT * FROM player_state WHERE id = 1").first.map {
            let soundscape = $0["soundscape"]?.text
            var layers = $0["layers"]?.text.flatMap(LayersColumn.layers) ?? []
            if layers.first?.soundscape != soundscape { layers = [] }
            return PersistedState(
                volume: Int($0["volume"]?.integer ?? 50), soundscape: soundscape,
                wantsPlaying: ($0["wants_playing"]?.integer ?? 0) != 0,
                paused: ($0["paused"]?.integer ?? 0) != 0,
                layers: layers, mixName: layers.isEmpty ? nil : $0["mix_name"]?.text)
        }
    }

    /// Every mix `save` would take, sorted by name; none in a file from before v7 (a
    /// read-only one is never migrated).
    static func readMixes(_ connection: SQLiteConnection) throws(SQLiteError) -> [SavedMix] {
        let table = try connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'saved_mixes'")
        guard !table.isEmpty else { return [] }
        return try connection.execute("SELECT name, layers FROM saved_mixes").compactMap { row -> SavedMix? in
            guard let name = row["name"]?.text, let layers = row["layers"]?.text.flatMap(LayersColumn.layers) else {
                return nil
            }
            let mix = SavedMix(name: name, layers: layers)
            return problem(mix) == nil ? mix : nil
        }
        .sorted { $0.name < $1.name }
    }

    /// Why `mix` cannot be saved, nil when it can.
    private static func problem(_ mix: SavedMix) -> String? {
        if mix.name.isEmpty { return "a mix needs a name" }
        if mix.layers.isEmpty { return "a mix needs at least one layer" }
        return LayersColumn.problem(mix.layers)
    }

    /// Each preference from its `preference_values` row (v6), or for a name without one, from
    /// the v2-v5 `preferences` row, whose columns are the names with `_` for `-` and whose
    /// values `set` takes as they are (integers for `on`/`off` and percentages; NULL: none).
    /// A value `set` refuses leaves that preference at its default; a name it does not know
    /// (a newer build's) is passed over. Nil when neither table holds any.
    static func readPreferences(_ connection: SQLiteConnection) throws(SQLiteError) -> Preferences? {
        let tables = try connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0["name"]?.text }
        var stored: [String: String] = [:]
        if tables.contains("preferences"), let row = try connection.execute("SELECT * FROM preferences WHERE id = 1").first {
            for (column, value) in row where column != "id" && column != "updated_at" {
                let name = column.replacing("_", with: "-")
                switch value {
                case .text(let text): stored[name] = text
                case .integer(let number): stored[name] = String(number)
                case .real(let number): stored[name] = String(number)
                case .null: break
                }
            }
        }
        if tables.contains("preference_values") {
            for row in try connection.execute("SELECT name, value FROM preference_values") {
                guard let name = row["name"]?.text else { continue }
                stored[name] = row["value"]?.text ?? ""
            }
        }
        guard !stored.isEmpty else { return nil }
        var preferences = Preferences.default
        for name in Preferences.names {
            if let value = stored[name] { try? preferences.set(name, to: value) }
        }
        return preferences
    }

    private static func write(_ state: PersistedState, to connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(
            saveStateSQL,
            [
                .integer(Int64(state.volume)), (state.layers.first?.soundscape ?? state.soundscape).map { .text($0) } ?? .null,
                .integer(state.wantsPlaying ? 1 : 0), .integer(state.paused ? 1 : 0),
                state.layers.isEmpty ? .null : .text(LayersColumn.text(state.layers)), state.mixName.map { .text($0) } ?? .null,
                .real(unixSeconds()),
            ])
    }

    private static func write(_ mix: SavedMix, to connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(saveMixSQL, [.text(mix.name), .text(LayersColumn.text(mix.layers)), .real(unixSeconds())])
    }

    private static func write(_ preferences: Preferences, to connection: SQLiteConnection) throws(SQLiteError) {
        let now = unixSeconds()
        try connection.execute(
            savePreferencesSQL,
            Preferences.names.flatMap { name -> [SQLiteConnection.Value] in
                [.text(name), .text(preferences.value(named: name) ?? ""), .real(now)]
            })
    }

    /// Wall-clock seconds, for `updated_at` columns and the name of a damaged file moved aside.
    private static func unixSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
