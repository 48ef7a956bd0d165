import Glibc
import SoundscapeCore
import SoundscapeSystem

/// What survives a restart: the user's volume and soundscape, and whether
/// they wanted it playing (so a crash or reboot resumes the keep-alive).
public struct PersistedState: Sendable, Equatable {
    public var volume: Int
    public var soundscape: String?
    public var wantsPlaying: Bool
    /// The session goes on without sound (`wantsPlaying` is false then).
    public var paused: Bool

    public init(volume: Int, soundscape: String?, wantsPlaying: Bool, paused: Bool = false) {
        self.volume = volume
        self.soundscape = soundscape
        self.wantsPlaying = wantsPlaying
        self.paused = paused
    }
}

/// The preferences row as stored; the daemon validates it into `Preferences`.
public struct PersistedPreferences: Sendable, Equatable {
    public var interruptionMode: String
    public var duckLevel: Int
    public var autoResume: Bool
    public var pinnedSink: String?

    public init(interruptionMode: String, duckLevel: Int, autoResume: Bool, pinnedSink: String?) {
        self.interruptionMode = interruptionMode
        self.duckLevel = duckLevel
        self.autoResume = autoResume
        self.pinnedSink = pinnedSink
    }
}

public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// The daemon's SQLite database (WAL, migrations) in `$XDG_STATE_HOME/soundscaped`.
///
/// A database that cannot be read is moved aside and replaced rather than
/// stopping the daemon: losing a volume preference is better than losing the
/// keep-alive. Writes that fail (disk full, read-only) throw; the caller keeps
/// running on its in-memory state and reports the store as unhealthy.
public final class StateStore: @unchecked Sendable {
    public static let fileName = "state.sqlite"

    public let path: String
    /// Things worth telling the user once, such as a corrupt file moved aside.
    public let notices: [String]
    /// Serialises every use of the one connection (the player actor is the only
    /// caller, but the store does not rely on that).
    private let lock = StoreLock()
    private let connection: SQLiteConnection

    public init(directory: String) throws(StoreError) {
        if let problem = Directories.make(directory, mode: 0o700) {
            throw StoreError(description: "cannot create the state directory \(directory): \(problem)")
        }
        let path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        var notices: [String] = []
        do {
            connection = try Self.open(path: path)
        } catch {
            let aside = path + ".unreadable-\(Clock.unixSeconds())"
            for suffix in ["", "-wal", "-shm"] { rename(path + suffix, aside + suffix) }
            notices.append("the state database could not be opened (\(error)); moved it to \(aside) and started afresh")
            do {
                connection = try Self.open(path: path)
            } catch {
                throw StoreError(description: "cannot open the state database \(path): \(error)")
            }
        }
        self.path = path
        self.notices = notices
    }

    /// Opens, switches to WAL and brings the schema up to date; a file that is
    /// not a database fails here, on the first read.
    private static func open(path: String) throws(SQLiteError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
        // A handful of rows: a 64 KiB page cache instead of the default 2 MB keeps resident memory down.
        try connection.execute("PRAGMA cache_size = -64")
        try migrate(connection)
        for statement in [saveStateSQL, savePreferencesSQL, checkWritableSQL] {
            try connection.prepare(kept: statement)
        }
        return connection
    }

    /// Schema versions, applied in order and recorded in `user_version`. Each is
    /// idempotent (`IF NOT EXISTS`), so a database made by an earlier build that
    /// kept its own migration table is adopted as it is.
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
    ]

    /// The writes the daemon makes while it runs, compiled once at open (`SQLiteConnection.prepare(kept:)`).
    static let saveStateSQL = """
        INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, updated_at)
        VALUES (1, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
            wants_playing = excluded.wants_playing, paused = excluded.paused, updated_at = excluded.updated_at
        """
    static let savePreferencesSQL = """
        INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink, updated_at)
        VALUES (1, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
            duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
            pinned_sink = excluded.pinned_sink, updated_at = excluded.updated_at
        """
    static let checkWritableSQL = "INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, ?)"

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
            let rows = try lock.withLock { () throws(SQLiteError) in
                try connection.execute("SELECT volume, soundscape, wants_playing, paused FROM player_state WHERE id = 1")
            }
            return rows.first.map {
                PersistedState(volume: Int($0["volume"]?.integer ?? 50), soundscape: $0["soundscape"]?.text,
                               wantsPlaying: ($0["wants_playing"]?.integer ?? 0) != 0,
                               paused: ($0["paused"]?.integer ?? 0) != 0)
            }
        } catch {
            throw StoreError(description: "cannot read the saved state: \(error)")
        }
    }

    public func save(_ state: PersistedState) throws(StoreError) {
        do {
            try lock.withLock { () throws(SQLiteError) in
                try connection.execute(Self.saveStateSQL, [
                    .integer(Int64(state.volume)), state.soundscape.map { .text($0) } ?? .null,
                    .integer(state.wantsPlaying ? 1 : 0), .integer(state.paused ? 1 : 0), .real(Clock.unixSeconds()),
                ])
            }
        } catch {
            throw StoreError(description: "cannot save the state: \(error)")
        }
    }

    /// Saved preferences, or nil when none were ever set.
    public func loadPreferences() throws(StoreError) -> PersistedPreferences? {
        do {
            let rows = try lock.withLock { () throws(SQLiteError) in
                try connection.execute(
                    "SELECT interruption_mode, duck_level, auto_resume, pinned_sink FROM preferences WHERE id = 1")
            }
            return rows.first.map {
                PersistedPreferences(interruptionMode: $0["interruption_mode"]?.text ?? "pause",
                                     duckLevel: Int($0["duck_level"]?.integer ?? 30),
                                     autoResume: ($0["auto_resume"]?.integer ?? 1) != 0,
                                     pinnedSink: $0["pinned_sink"]?.text)
            }
        } catch {
            throw StoreError(description: "cannot read the saved preferences: \(error)")
        }
    }

    public func save(_ preferences: PersistedPreferences) throws(StoreError) {
        do {
            try lock.withLock { () throws(SQLiteError) in
                try connection.execute(Self.savePreferencesSQL, [
                    .text(preferences.interruptionMode), .integer(Int64(preferences.duckLevel)),
                    .integer(preferences.autoResume ? 1 : 0), preferences.pinnedSink.map { .text($0) } ?? .null,
                    .real(Clock.unixSeconds()),
                ])
            }
        } catch {
            throw StoreError(description: "cannot save the preferences: \(error)")
        }
    }

    /// Proves a write goes through (for the health probe) without changing data.
    public func checkWritable() throws(StoreError) {
        do {
            try lock.withLock { () throws(SQLiteError) in
                try connection.execute(Self.checkWritableSQL, [.real(Clock.unixSeconds())])
            }
        } catch {
            throw StoreError(description: "the state database is not writable: \(error)")
        }
    }
}

/// Wall-clock seconds, for `updated_at` columns.
enum Clock {
    static func unixSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A pthread mutex with a typed-throws `withLock`.
final class StoreLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() {
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
    }

    @discardableResult
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
